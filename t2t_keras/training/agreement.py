"""Every worker of a multi-worker run trains what the chief trains.

Before anything is written or updated, each worker sends the chief a
digest of what it would train (``settings``): its resolved hparams, the
model spec (model, vocabulary sizes, the vocabulary's and the training
shards' SHA-256) and the run settings that fix how many collectives each
update and evaluation makes (steps, save and evaluation frequencies). One
gather carries them (``Cluster.gather_texts``); a worker whose digest
differs from the chief's stops every worker with the same one line,
naming the setting and the worker, exit 2, no checkpoint written.
Without the check, a worker started with another learning rate trains
beside the chief without a word, one with another vocabulary of the same
size trains on other ids, and other step counts hang the collectives.
"""

import json

from t2t_keras.errors import UserError

# The run settings that set collective counts, and what each is called.
RUN_SETTINGS = {"train_steps": "--train_steps", "eval_every":
                "--local_eval_frequency", "eval_steps": "--eval_steps",
                "train_minutes": "--train_minutes",
                "jit_compile": "--xla_compile", "eval_bleu": "--eval_bleu"}
# What a spec's digests are called in the line.
SPEC = {"vocab_sha256": "vocabulary (SHA-256)",
        "train_data_sha256": "training shards (SHA-256)",
        "problem": "--problem", "model": "model",
        "input_vocab_size": "input_vocab_size",
        "target_vocab_size": "target_vocab_size"}


def settings(hparams, spec, config):
  """{name shown in the line: value} of what this worker would train."""
  found = {f"hparams {k}": v for k, v in hparams.values().items()}
  found.update({shown: spec.get(key) for key, shown in SPEC.items()})
  found.update({shown: getattr(config, key, None)
                for key, shown in RUN_SETTINGS.items()})
  policy = getattr(config, "checkpoints", None)
  if policy is not None:
    found["--save_checkpoints_steps"] = policy.every_steps
    found["--save_checkpoints_secs"] = policy.every_secs
  return json.loads(json.dumps(found, default=str))


def _shown(value):
  text = json.dumps(value)
  return text if len(text) <= 24 else text[:12] + "..." + text[-6:]


def differences(all_settings):
  """[(rank, name, theirs, the chief's)] of the workers whose settings
  (``all_settings``: one dict a worker, in rank order) differ from the
  chief's (rank 0)."""
  chief = all_settings[0]
  first = list(SPEC.values())   # the data and model first, then the rest
  found = []
  for rank, theirs in enumerate(all_settings[1:], 1):
    for name in sorted(set(chief) | set(theirs), key=lambda n: (
        first.index(n) if n in first else len(first), n)):
      if chief.get(name) != theirs.get(name):
        found.append((rank, name, theirs.get(name), chief.get(name)))
  return found


def check_agreement(all_settings):
  """The one-line ``UserError`` for the first difference, or None."""
  found = differences(all_settings)
  if not found:
    return None
  rank, name, theirs, chief = found[0]
  others = sorted({n for _, n, _, _ in found[1:]} - {name})
  workers = sorted({r for r, _, _, _ in found})
  more = (f" (and {len(others)} more: {', '.join(others[:3])}"
          f"{', ...' if len(others) > 3 else ''})" if others else "")
  return UserError(
      f"worker {rank}'s {name} is {_shown(theirs)}, the chief's "
      f"{_shown(chief)}{more}: every worker must train the chief's model "
      f"on the chief's data; start worker(s) "
      f"{', '.join(map(str, workers))} with the chief's flags and "
      "--data_dir contents; nothing was trained")


def agree_on_settings(cluster, mine):
  """Gathers every worker's ``settings`` (``mine``: this worker's) and
  raises the same one line on every worker where any differs."""
  if cluster.workers < 2:
    return
  texts = cluster.gather_texts([json.dumps(mine, sort_keys=True)])
  error = check_agreement([json.loads(t[0]) for t in texts])
  if error is not None:
    raise error
