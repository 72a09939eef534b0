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

from t2t_keras import json_files
from t2t_keras.outputs import output_file


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
  return json_files.load(path, ("train",), "run t2t-datagen again with the "
                         "same --raw_prefixes to rewrite it")["train"]


def sample_mix(streams, weights, seed=None):
  """One dataset drawing from the endless ``streams`` with probabilities
  proportional to ``weights`` (seeded: the same seed, the same draws)."""
  total = float(sum(weights))
  return tf.data.Dataset.sample_from_datasets(
      streams, weights=[w / total for w in weights], seed=seed)
