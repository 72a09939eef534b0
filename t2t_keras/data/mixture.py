"""Weighted mixing of several training corpora (OpenNMT-tf's
train_files_weights, Marian's --data-weighting).

t2t-datagen encodes each corpus of ``--raw_prefixes="train=a:0.7,b:0.3"``
into its own shards (split names ``train.0``, ``train.1``...) and records
the corpora and weights in ``<data_name>-train-mix.json``; training reads
each corpus as an endless shuffled stream and draws every example from
corpus i with probability weight_i / sum(weights). Editing the weights in
that file changes the mix without re-encoding.
"""

import json
import os

import tensorflow as tf

from t2t_keras.io import json_files
from t2t_keras.errors import UserError
from t2t_keras.io.outputs import output_file


def mix_path(data_dir, data_name):
  return os.path.join(data_dir, f"{data_name}-train-mix.json")


def part_split(index):
  """The split name under which corpus ``index`` of the mix is encoded."""
  return f"train.{index}"


def write_mix(path, corpora):
  """Records ``corpora``, a list of (prefix, weight), atomically."""
  parts = [{"prefix": prefix, "weight": weight, "split": part_split(i)}
           for i, (prefix, weight) in enumerate(corpora)]
  with output_file(path, "w", encoding="utf-8") as f:
    json.dump({"train": parts}, f, indent=1)


def read_mix(path):
  """The recorded corpora (dicts with prefix, weight, split), or None."""
  if not os.path.isfile(path):
    return None
  remedy = ("run t2t-datagen again with the same --raw_prefixes to rewrite "
            "it")
  parts = json_files.load(path, {"train": list}, remedy)["train"]
  for i, part in enumerate(parts):
    json_files.check(path, f"train[{i}]", part, dict, remedy)
    for key, kind in (("prefix", str), ("weight", float), ("split", str)):
      if key not in part:
        raise UserError(f"{path} is damaged: train[{i}] has no {key!r}; "
                        f"{remedy}")
      json_files.check(path, f"train[{i}] {key}", part[key], kind, remedy)
    if not part["weight"] > 0:
      raise UserError(f"{path} is damaged: train[{i}] weight is "
                      f"{part['weight']}, expected a number > 0 (edit the "
                      "weights there, or rerun t2t-datagen)")
  if not parts:
    raise UserError(f"{path} is damaged: no training corpus; {remedy}")
  return parts


def sample_mix(streams, weights, seed=None):
  """One dataset drawing from the endless ``streams`` with probabilities
  proportional to ``weights`` (seeded: the same seed, the same draws)."""
  total = float(sum(weights))
  return tf.data.Dataset.sample_from_datasets(
      streams, weights=[w / total for w in weights], seed=seed)
