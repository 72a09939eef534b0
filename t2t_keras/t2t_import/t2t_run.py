"""What a tensor2tensor run and its data directory hold, read without
tensor2tensor: the flags and hparams it wrote, its newest checkpoint, the
SubwordTextEncoder vocabulary and TFRecord shards of its problem."""

import dataclasses
import glob
import json
import os
import re

import tensorflow as tf

from t2t_keras.data.t2t_subword import read_subtokens
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.io.checkpoint_io import check_whole

FLAG_FILES = ("flags_t2t.txt", "flags.txt")
# The hparams that give the model's shapes: each a whole number >= 1.
MODEL_SIZES = ("hidden_size", "filter_size", "num_heads", "num_hidden_layers")
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


def read_run(directory, checkpoint_path=None, problem=None):
  """The ``T2TRun`` of ``directory`` (its newest checkpoint, or
  ``checkpoint_path``: a prefix, or a folder whose newest is taken);
  ``problem``, tensor2tensor's problem name, where the run's flags.txt
  is missing (or to say which it was)."""
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
  for name in MODEL_SIZES:
    value = hparams.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
      raise UserError(f"{path} is damaged: {name} is "
                      f"{'missing' if name not in hparams else repr(value)}"
                      ", expected a whole number of at least 1")
  checkpoint = checkpoint_path or directory
  if os.path.isdir(checkpoint):
    checkpoint = tf.train.latest_checkpoint(checkpoint)
    if checkpoint is None:
      raise MissingFileError(f"{checkpoint_path or directory} holds no "
                             "checkpoint (its 'checkpoint' file lists none)")
  if not os.path.isfile(checkpoint + ".index"):
    raise MissingFileError(f"checkpoint {checkpoint} does not exist (no "
                           f"{checkpoint}.index)")
  check_whole(checkpoint)
  reader = tf.train.load_checkpoint(checkpoint)
  if reader.has_tensor("global_step"):
    step = int(reader.get_tensor("global_step"))
  else:
    match = _STEP.search(checkpoint)
    step = int(match.group(1)) if match else 0
  flags = read_flags(directory)
  if problem:
    if flags.get("problem") not in (None, problem):
      raise UserError(f"--t2t_problem={problem}, but {directory}'s flags say "
                      f"the run trained on {flags['problem']}")
    flags["problem"] = problem
  if not flags.get("problem"):
    raise MissingFileError(
        f"{directory} has no flags.txt naming the run's problem: give it "
        "with --t2t_problem (tensor2tensor's --problem of the run)")
  return T2TRun(directory, flags, hparams, checkpoint, step)


def _suffix(path):
  """A side's vocabulary ``vocab.NAME.subwords.en``: "en"; shared: ""."""
  tail = os.path.basename(path).rsplit(".subwords", 1)[-1]
  return tail.lstrip(".")


def _by_sides(paths, problem, sizes):
  """(source, target) of two per-side vocabulary files: by their sizes
  against the embeddings' (input, target) rows, else by the order the
  problem's name gives their languages (translate_enzh: en, then zh;
  a _rev problem the other way)."""
  counts = {p: len(read_subtokens(p)) for p in paths}
  matching = [(a, b) for a in paths for b in paths if a != b and
              counts[a] == sizes[0] and counts[b] == sizes[1]]
  if len(matching) == 1:
    return matching[0]
  name = (problem or "").removesuffix("_rev")
  order = sorted(paths, key=lambda p: name.find(_suffix(p))
                 if _suffix(p) in name else len(name))
  if all(_suffix(p) in name for p in paths) and len(set(
      name.find(_suffix(p)) for p in paths)) == 2:
    return tuple(reversed(order)) if (problem or "").endswith("_rev") \
        else tuple(order)
  raise UserError(
      f"cannot tell which of {', '.join(os.path.basename(p) for p in paths)}"
      " is the source vocabulary; name them with --vocab_file (source) and "
      "--target_vocab_file")


def find_vocabs(data_dir, problem, vocab_file=None, target_vocab_file=None,
                sizes=(None, None)):
  """(source path, target path) of ``problem``'s SubwordTextEncoder files
  in ``data_dir``: one shared file (``vocab.NAME.subwords``) twice, or a
  file a side (``vocab.NAME.subwords.en`` and ``.de``, tensor2tensor's
  translate_enzh layout). ``sizes``: the checkpoint's (input, target)
  embedding rows, which tell the sides apart."""
  for flag, path in (("vocab_file", vocab_file),
                     ("target_vocab_file", target_vocab_file)):
    if path and not os.path.isfile(path):
      raise MissingFileError(f"--{flag} {path} does not exist")
  if vocab_file:
    return vocab_file, target_vocab_file or vocab_file
  if target_vocab_file:
    raise UserError("--target_vocab_file goes with --vocab_file (the "
                    "source side's)")
  if not os.path.isdir(data_dir):
    raise MissingFileError(f"--t2t_data_dir {data_dir} is not a directory")
  found = sorted(glob.glob(os.path.join(glob.escape(data_dir),
                                        "vocab.*.subwords")) +
                 glob.glob(os.path.join(glob.escape(data_dir),
                                        "vocab.*.subwords.*")))
  base = (problem or "").removesuffix("_rev")
  own = [p for p in found if os.path.basename(p).startswith(f"vocab.{base}.")]
  candidates = own or found
  if not candidates:
    others = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(glob.escape(data_dir), "vocab.*")))
    raise MissingFileError(
        f"{data_dir} holds no SubwordTextEncoder vocabulary "
        "(vocab.*.subwords, or vocab.*.subwords.LANG a side)" +
        (f"; found {', '.join(others)}: t2t-import reads subword "
         "vocabularies only" if others else ""))
  shared = [p for p in candidates if not _suffix(p)]
  sided = [p for p in candidates if _suffix(p)]
  if len(shared) == 1 and not sided:
    return shared[0], shared[0]
  if len(sided) == 2 and not shared:
    return _by_sides(sided, problem, sizes)
  raise UserError(f"{data_dir} holds several vocabularies "
                  f"({', '.join(os.path.basename(p) for p in candidates)}); "
                  "name the run's with --vocab_file (and "
                  "--target_vocab_file where each side has its own)")


def shard_name(data_dir, problem):
  """The name tensor2tensor's shards of ``problem`` carry in ``data_dir``
  (a ``_rev`` problem reads its base's), or None if there are none."""
  for name in (problem, (problem or "").removesuffix("_rev")):
    if name and glob.glob(os.path.join(glob.escape(data_dir),
                                       f"{name}-*-*-of-*")):
      return name
  return None


def check_shards(data_dir, name):
  """A ``UserError`` unless the shards ``name-*`` of ``data_dir`` hold
  examples of text to text: the first example of the first non-empty
  shard of each split has int64 ``inputs`` and ``targets``, and some
  train shard holds an example."""
  for split in ("train", "dev"):
    shards = sorted(glob.glob(os.path.join(glob.escape(data_dir),
                                           f"{name}-{split}-*-of-*")))
    first = None
    for path in shards:
      for record in tf.data.TFRecordDataset(path).take(1):
        first = path, tf.train.Example.FromString(record.numpy())
      if first:
        break
    if first is None:
      if split == "train" and shards:
        raise UserError(f"the train shards {name}-train-* in {data_dir} "
                        "hold no examples")
      continue
    path, example = first
    feature = example.features.feature
    have = sorted(feature)
    for key in ("inputs", "targets"):
      if key not in feature or feature[key].WhichOneof("kind") != \
          "int64_list":
        raise UserError(
            f"{path} holds examples of {', '.join(have) or 'no features'}"
            ", not the int64 inputs and targets of a text-to-text problem:"
            " not this run's shards")
