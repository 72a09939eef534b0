"""The workers of a multi-worker run, as TensorFlow's multi-worker guide
lays them out: TF_CONFIG names a ``chief`` and/or ``worker`` tasks; the
chief (or worker 0 when there is none) writes the run directory; every
other worker restores the chief's checkpoint and, at each save, writes its
data position only (``checkpoints.Checkpointer.save``). Saves are decided
by step on all of them (``cluster``), so all save the same steps, and
``end_in_agreement`` checks that all end with the chief's state. A
worker that cannot read the chief's run directory (no shared folder) is
not left on other weights: ``start_from_chief`` compares what every worker
restored and hands the chief's state to those that differ. A worker that
dies makes the collectives of the others fail; that failure is said in one
line naming the worker, not as TensorFlow's traceback.
"""

import dataclasses
import json
import os
import re
import time

import tensorflow as tf

from t2t_keras.errors import UserError
from t2t_keras.models.precision import POLICIES
from t2t_keras.training.cluster import Cluster, state_variables
from t2t_keras.training.strategy import num_workers, worker_index

# What the collectives of the other workers raise when one is gone.
PEER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
               tf.errors.CancelledError, tf.errors.AbortedError,
               tf.errors.InternalError)
# How long a worker stays after the run's last collective (end_in_agreement).
LINGER_SECONDS = 2.0
_TASK = re.compile(r"/job:(chief|worker)/replica:\d+/task:(\d+)")


def worker_dirs(output_dir, chief, policy):
  """(where this worker saves, its ``CheckpointPolicy``, the chief's run
  directory to restore from or None on the chief)."""
  if chief:
    return output_dir, policy, None
  temp = os.path.join(output_dir, f"workertemp_{worker_index()}")
  return temp, dataclasses.replace(policy, keep=1), output_dir


class PeerGone(UserError):
  """Another worker of a multi-worker run stopped answering."""


def peer_failure(error, step, output_dir, timeout=None):
  """The one-line ``PeerGone`` for a collective's ``error`` in a multi-worker
  run (None when this is not one); ``step`` None: before the first update
  (another worker refused its start); ``timeout``: the run's
  --worker_timeout_secs, named as what allows a longer silence."""
  if num_workers() < 2 or not isinstance(error, PEER_ERRORS):
    return None
  tasks = sorted(set(_TASK.findall(str(error))) - {_me()})
  who = (", ".join(f"{kind} {index}" for kind, index in tasks)
         if tasks else "another worker")
  latest = output_dir and tf.train.latest_checkpoint(output_dir)
  resume = (f"start every worker again with the same command: all resume "
            f"from {latest}" if latest else "start every worker again with "
            "the same command: no checkpoint was saved, so they start over")
  allow = (f" (silent for more than about {timeout:g} s; "
           "--worker_timeout_secs allows longer)" if timeout else "")
  when = (f"at step {step}" if step is not None else
          "before training began (a refusal there says why)")
  return PeerGone(f"{who} of the {num_workers()} workers stopped answering "
                  f"{when}{allow} ({type(error).__name__}); {resume}")


def _me():
  """(this task's type, its index as a string), as the error texts name
  tasks."""
  task = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}").get("task", {})
  return task.get("type", ""), str(task.get("index", 0))


def start_from_chief(trainer, restored, log):
  """Makes every worker start from the chief's state, whatever each one
  restored (``restored``: this worker's checkpoint path, or None): the
  step and a fingerprint of every saved variable are gathered; where any
  differs (a worker that cannot read the chief's run directory restored
  another checkpoint or none), every variable is taken from the chief over
  the collective, said in one line, and compared again. Returns what this
  worker now starts from: its checkpoint, the chief's step as
  "the chief's checkpoint (step N)", or None for a fresh start."""
  cluster = trainer.cluster
  variables = state_variables(trainer.checkpointer.checkpoint)
  mine = [trainer.step] + cluster.fingerprint(variables)
  differ = cluster.differing(mine)
  if not differ:
    return restored
  chief_step = int(cluster.from_chief([trainer.step])[0])
  names = ", ".join(f"worker {r}" for r in differ)
  log(f"{names} of the {cluster.workers} did not restore the chief's state "
      f"(step {chief_step:,}" + (
          f"; this worker restored {restored or 'nothing'}, step "
          f"{trainer.step:,}, from {trainer.checkpointer.shared_dir}"
          if cluster.rank in differ else "") +
      "): every worker takes the chief's weights and optimizer state over "
      "the network (give every worker the chief's --output_dir as a shared "
      "folder to restore it from disk)")
  cluster.take_chief_state(variables)
  trainer.forget_step()
  still = cluster.differing([trainer.step] + cluster.fingerprint(variables))
  if still:
    raise UserError(f"worker(s) {', '.join(map(str, still))} still hold "
                    "another state after taking the chief's; nothing was "
                    "trained")
  if cluster.rank in differ:
    return f"the chief's checkpoint (step {chief_step:,})" if chief_step \
        else None
  return restored


def end_in_agreement(trainer, log):
  """Checks, when training ends, that every worker holds the chief's
  weights and optimizer state (one gather of a fingerprint): the chief's
  checkpoint, the only one written, is then every worker's; says so in a
  line naming the fingerprint, else raises."""
  cluster = trainer.cluster
  variables = list(trainer.model.weights) + list(trainer.optimizer.variables)
  mine = [trainer.step] + cluster.fingerprint(variables)
  differ = cluster.differing(mine)
  if differ:
    raise UserError(f"worker(s) {', '.join(map(str, differ))} ended at step "
                    f"{trainer.step:,} with another state than the chief's; "
                    "the chief's checkpoint is the run's")
  log(f"every worker of the {cluster.workers} ended at step "
      f"{trainer.step:,} with the chief's weights and optimizer state "
      f"(sum {mine[1]:.9g}, sum of squares {mine[2]:.9g})")
  # A collective's last exchange is a pull: a worker that has its peers'
  # parts may end while a peer still reads its own. The last collective of
  # a run is this one; each worker stays long enough for the others' reads.
  time.sleep(LINGER_SECONDS)


PRECISIONS = tuple(POLICIES)


def agree_on_precision(strategy, hparams, log):
  """Sets ``hparams.activation_dtype`` to the chief's on every worker (one
  gather): ``activation_dtype=auto`` is resolved from each machine's own
  devices (or a run directory only the chief may see), and workers that
  built their variables in other dtypes would wait on each other."""
  mine = hparams.activation_dtype
  chief = PRECISIONS[int(Cluster(strategy).from_chief(
      [PRECISIONS.index(mine)])[0])]
  if chief != mine:
    log(f"activation_dtype: {chief}, the chief's (this worker chose {mine}): "
        "every worker trains in one precision")
    hparams.activation_dtype = chief
