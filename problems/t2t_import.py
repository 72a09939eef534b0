"""``t2t_import``: the data of a run imported from tensor2tensor
(``t2t-import``). Its --data_dir holds the run's SubwordTextEncoder
vocabulary (or one a side) and ``t2t_import.json``, which says where tensor2tensor's
TFRecord shards are; training and dev read those shards as they are
(``inputs``/``targets`` int64 lists ending in EOS)."""

import glob
import os

from t2t_keras import registry
from t2t_keras.data import pipeline
from t2t_keras.data.problem import Problem
from t2t_keras.data.t2t_subword import T2TSubwordVocab
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.io import json_files

NONE = type(None)

# What t2t-import writes into the data dir beside the vocabulary.
RECORD = "t2t_import.json"

# tensor2tensor's names of the splits in its shard names.
_SPLITS = {"train": "train", "dev": "dev", "test": "test"}


@registry.register_problem("t2t_import")
class T2TImport(Problem):
  """Text to text with the imported run's vocabulary on both sides, or
  its source and target vocabularies (``target_vocab`` in the record)."""

  validation_bleu = True
  # tensor2tensor's decoder let outputs run to the input's length (EOS
  # included) + 100 tokens, unfinished at the limit; here the limit counts
  # the EOS forced there, so one more gives tensor2tensor's tokens.
  decode_defaults = {"extra_length": 101}

  def _record(self, data_dir):
    if not data_dir:
      raise UserError(f"problem {self.name} needs --data_dir (the one "
                      "t2t-import wrote)")
    path = os.path.join(data_dir, RECORD)
    if not os.path.isfile(path):
      raise MissingFileError(
          f"{path} does not exist: --problem=t2t_import reads the --data_dir "
          "that t2t-import wrote")
    remedy = "run t2t-import again into a new --data_dir"
    record = json_files.load(path, {"vocab": str, "imported_from": str},
                             remedy)
    for key, kind in (("target_vocab", str), ("shard_name", (str, NONE)),
                      ("t2t_data_dir", (str, NONE)), ("reverse", bool)):
      if key in record:
        json_files.check(path, repr(key), record[key], kind, remedy)
    return record

  def vocab(self, data_dir):
    return self.input_vocab(data_dir)

  def input_vocab(self, data_dir):
    record = self._record(data_dir)
    return T2TSubwordVocab.load(os.path.join(data_dir, record["vocab"]))

  def target_vocab(self, data_dir):
    record = self._record(data_dir)
    return T2TSubwordVocab.load(os.path.join(
        data_dir, record.get("target_vocab", record["vocab"])))

  def vocab_sizes(self, data_dir):
    return self.input_vocab(data_dir).size, self.target_vocab(data_dir).size

  def generate_data(self, data_dir, tmp_dir=None, raw_dir=None,
                    raw_prefixes=None, byte_budget=None, log=None):
    del tmp_dir, raw_dir, raw_prefixes, byte_budget, log
    self._record(data_dir)   # refuses a data dir t2t-import did not write
    raise UserError(f"{data_dir} was written by t2t-import and reads "
                    "tensor2tensor's shards: there is nothing to generate")

  def data_files(self, data_dir):
    record = self._record(data_dir)
    if not record.get("shard_name"):
      return []
    return glob.glob(os.path.join(glob.escape(record["t2t_data_dir"]),
                                  f"{record['shard_name']}-*-of-*"))

  def examples(self, split, data_dir, seed=None, input_context=None):
    record = self._record(data_dir)
    if not record.get("shard_name"):
      raise MissingFileError(
          f"{data_dir} was imported without tensor2tensor's shards: run "
          "t2t-import again with --t2t_data_dir (the run's --data_dir)")
    files = sorted(glob.glob(os.path.join(
        glob.escape(record["t2t_data_dir"]),
        f"{record['shard_name']}-{_SPLITS[split]}-*-of-*")))
    if not files:
      raise MissingFileError(
          f"no {split} shards {record['shard_name']}-{_SPLITS[split]}-* in "
          f"{record['t2t_data_dir']}")
    dataset = pipeline.read_records(files, shuffle_files=split == "train",
                                    seed=seed, input_context=input_context)
    if record.get("reverse"):
      dataset = dataset.map(lambda ex: {"inputs": ex["targets"],
                                        "targets": ex["inputs"]})
    return dataset
