"""What a tensor2tensor run and its data directory hold, read without
tensor2tensor: the flags and hparams it wrote, its newest checkpoint, the
SubwordTextEncoder vocabulary and TFRecord shards of its problem."""

import dataclasses
import glob
import json
import os
import re

import tensorflow as tf

from t2t_keras.errors import MissingFileError, UserError

FLAG_FILES = ("flags_t2t.txt", "flags.txt")
_STEP = re.compile(r"-(\d+)$")


@dataclasses.dataclass
class T2TRun:
  """A tensor2tensor training run, as read by ``read_run``."""
  directory: str
  flags: dict          # {name: value string} of flags.txt
  hparams: dict        # hparams.json
  checkpoint: str      # the checkpoint's prefix
  step: int            # its global_step

  @property
  def problem(self):
    return self.flags.get("problem")


def read_flags(directory):
  """{flag: value} from the run's flag files (``--name=value`` lines;
  ``--noname`` is "false")."""
  flags = {}
  for name in reversed(FLAG_FILES):
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
      continue
    with open(path, encoding="utf-8") as f:
      for line in f:
        line = line.strip()
        if not line.startswith("--"):
          continue
        key, eq, value = line[2:].partition("=")
        if not eq and key.startswith("no"):
          key, value = key[2:], "false"
        flags[key] = value
  return flags


def read_run(directory, checkpoint_path=None):
  """The ``T2TRun`` of ``directory`` (its newest checkpoint, or
  ``checkpoint_path``: a prefix, or a folder whose newest is taken)."""
  if not os.path.isdir(directory):
    raise MissingFileError(f"--t2t_output_dir {directory} is not a "
                           "directory")
  path = os.path.join(directory, "hparams.json")
  if not os.path.isfile(path):
    raise MissingFileError(
        f"{path} does not exist: --t2t_output_dir must be the --output_dir "
        "of a tensor2tensor t2t-trainer run (it writes hparams.json)")
  try:
    with open(path, encoding="utf-8") as f:
      hparams = json.load(f)
  except (ValueError, UnicodeDecodeError) as e:
    raise UserError(f"{path} is not JSON ({e})") from None
  if not isinstance(hparams, dict) or "hidden_size" not in hparams:
    raise UserError(f"{path} holds no model hparams (no hidden_size)")
  checkpoint = checkpoint_path or directory
  if os.path.isdir(checkpoint):
    checkpoint = tf.train.latest_checkpoint(checkpoint)
    if checkpoint is None:
      raise MissingFileError(f"{checkpoint_path or directory} holds no "
                             "checkpoint (its 'checkpoint' file lists none)")
  if not os.path.isfile(checkpoint + ".index"):
    raise MissingFileError(f"checkpoint {checkpoint} does not exist (no "
                           f"{checkpoint}.index)")
  reader = tf.train.load_checkpoint(checkpoint)
  if reader.has_tensor("global_step"):
    step = int(reader.get_tensor("global_step"))
  else:
    match = _STEP.search(checkpoint)
    step = int(match.group(1)) if match else 0
  return T2TRun(directory, read_flags(directory), hparams, checkpoint, step)


def find_vocab(data_dir, problem, vocab_file=None):
  """The SubwordTextEncoder file of ``problem`` in ``data_dir``."""
  if vocab_file:
    if not os.path.isfile(vocab_file):
      raise MissingFileError(f"--vocab_file {vocab_file} does not exist")
    return vocab_file
  if not os.path.isdir(data_dir):
    raise MissingFileError(f"--t2t_data_dir {data_dir} is not a directory")
  found = sorted(glob.glob(os.path.join(data_dir, "vocab.*.subwords")))
  own = [p for p in found if os.path.basename(p).startswith(
      f"vocab.{(problem or '').removesuffix('_rev')}.")]
  if len(own) == 1 or len(found) == 1:
    return (own or found)[0]
  if not found:
    others = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(data_dir, "vocab.*")))
    raise MissingFileError(
        f"{data_dir} holds no SubwordTextEncoder vocabulary "
        "(vocab.*.subwords)" + (f"; found {', '.join(others)}: t2t-import "
                                "reads subword vocabularies only"
                                if others else ""))
  raise UserError(f"{data_dir} holds several vocabularies "
                  f"({', '.join(os.path.basename(p) for p in found)}); "
                  "name the run's with --vocab_file")


def shard_name(data_dir, problem):
  """The name tensor2tensor's shards of ``problem`` carry in ``data_dir``
  (a ``_rev`` problem reads its base's), or None if there are none."""
  for name in (problem, (problem or "").removesuffix("_rev")):
    if name and glob.glob(os.path.join(glob.escape(data_dir),
                                       f"{name}-*-*-of-*")):
      return name
  return None
