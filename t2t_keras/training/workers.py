"""The workers of a multi-worker run, as TensorFlow's multi-worker guide
lays them out: TF_CONFIG names a ``chief`` and/or ``worker`` tasks; the
chief (or worker 0 when there is none) writes the run directory; every
other worker restores the chief's checkpoint and writes its own saves to a
temporary directory, ``RUN/workertemp_I``, keeping one. Saves are decided
by step on all of them (``agreement``), so all save the same steps. A
worker that dies makes the collectives of the others fail; that failure is
said in one line naming the worker, not as TensorFlow's traceback.
"""

import dataclasses
import json
import os
import re

import tensorflow as tf

from t2t_keras.errors import UserError
from t2t_keras.training.strategy import num_workers, worker_index

# What the collectives of the other workers raise when one is gone.
PEER_ERRORS = (tf.errors.UnavailableError, tf.errors.DeadlineExceededError,
               tf.errors.CancelledError, tf.errors.AbortedError,
               tf.errors.InternalError)
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


def peer_failure(error, step, output_dir):
  """The one-line ``PeerGone`` for a collective's ``error`` in a multi-worker
  run (None when this is not one)."""
  if num_workers() < 2 or not isinstance(error, PEER_ERRORS):
    return None
  tasks = sorted(set(_TASK.findall(str(error))) - {_me()})
  who = (", ".join(f"{kind} {index}" for kind, index in tasks)
         if tasks else "another worker")
  latest = tf.train.latest_checkpoint(output_dir)
  resume = (f"start every worker again with the same command: all resume "
            f"from {latest}" if latest else "start every worker again with "
            "the same command: no checkpoint was saved, so they start over")
  return PeerGone(f"{who} of the {num_workers()} workers stopped answering "
                  f"at step {step} ({type(error).__name__}); {resume}")


def _me():
  """(this task's type, its index as a string), as the error texts name
  tasks."""
  task = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}").get("task", {})
  return task.get("type", ""), str(task.get("index", 0))
