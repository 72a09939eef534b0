"""More cases of scripts/hostile_user.py (the format of hostile_cases.py):
closed and broken streams for every command that reads or writes one,
inputs changed between two runs, counts at 0, run files from elsewhere,
a symbolic link as the output, an unusable cache, a diverging run."""

import glob
import os
import subprocess

from hostile_cases import _edit_json, refused_run
from hostile_steps import (TINY, copy_data, copy_run, decoder, in_dir,
                           same_lines, source_file, trainer, write_file)

CLOSED = {"stdin": 'exec "$@" <&-', "stdout": 'exec "$@" >&-'}
PIPE_TO_HEAD = 'set -o pipefail; "$@" | head -c 1 >/dev/null'


def _shell(script, argv):
  return ["bash", "-c", script, "_", *argv]


LINES = "a b c d\n" * 2000
TREE = "(S (X a))\n"


def _bleu_files(h):
  return ["t2t-bleu",
          f"--translation={write_file(in_dir(h, 't.txt'), LINES)}",
          f"--reference={write_file(in_dir(h, 'r.txt'), LINES)}"]


def _streams():
  """A closed stdin, a closed stdout and a reader that goes away, for the
  commands that read or write a stream."""
  readers = {   # name: (command, what its one line names)
      "decoder": (decoder, "standard input is closed"),
      "bleu --translation=/dev/stdin": (
          lambda h: ["t2t-bleu", "--translation=/dev/stdin",
                     f"--reference={source_file(h)}"], "/dev/stdin"),
  }
  writers = {
      # 2,000 lines: more output than a pipe holds, so that it is written
      # while the reader is gone.
      "decoder": lambda h: decoder(h, None, None,
                                   f"--decode_from_file={source_file(h, 2000)}"),
      "bleu": _bleu_files,
      "evalb": lambda h: ["t2t-evalb",
                          f"--gold_file={write_file(in_dir(h, 'g'), TREE)}",
                          f"--test_file={write_file(in_dir(h, 't'), TREE)}"],
  }
  cases = [dict(kind="closed stream", name=f"{name}: stdin closed",
                command=lambda h, make=make: _shell(CLOSED["stdin"], make(h)),
                error=error) for name, (make, error) in readers.items()]
  cases += [dict(kind="closed stream", name=f"{name}: stdout closed",
                 command=lambda h, make=make: _shell(CLOSED["stdout"],
                                                     make(h)),
                 error="standard output is closed")
            for name, make in writers.items()]
  # A reader gone before the last write (an output written in one piece
  # that fits the pipe is read whole, and the command ends well).
  cases += [dict(kind="closed stream", name=f"{name}: piped to head -c 1",
                 command=lambda h, make=make: _shell(PIPE_TO_HEAD, make(h)),
                 exit=141) for name, make in writers.items()
            if name in ("decoder", "bleu")]
  return cases


def _resumed_on(h, change):
  """A copy of the run resumed on a copy of its data that ``change``
  altered (the run's model.json records what it trained on)."""
  run, data = copy_run(h), copy_data(h)
  change(data)
  return trainer(dict(h, data=data), run, "--train_steps=41")


def _vocab_made_again(data):
  """The vocabulary as datagen would make it from other text: the same
  size, other scores (a valid model, other bytes)."""
  from sentencepiece import sentencepiece_model_pb2
  vocab = glob.glob(os.path.join(data, "vocab.*"))[0]
  model = sentencepiece_model_pb2.ModelProto()
  with open(vocab, "rb") as f:
    model.ParseFromString(f.read())
  for piece in model.pieces:
    piece.score -= 1.0
  write_file(vocab, model.SerializeToString())


def _shards_made_again(data):
  shard = sorted(glob.glob(os.path.join(data, "*-train-*-of-*")))[0]
  with open(shard, "ab") as f:
    f.write(b"\0" * 16)


def _other_raw(h):
  raw, other = in_dir(h, "raw"), in_dir(h, "other")
  for folder, words in ((raw, "a b c d e f"), (other, "g h i j k l")):
    os.makedirs(folder)
    for split in ("train", "dev"):
      for lang in ("en", "de"):
        write_file(os.path.join(folder, f"{split}.{lang}"),
                   "".join(f"{words} {i}\n" for i in range(50)))
  command = ["t2t-datagen", "--problem=translate_local", "--source_lang=en",
             "--target_lang=de", f"--data_dir={in_dir(h, 'newdata')}",
             "--raw_prefixes=train=train,dev=dev", "--vocab_size=300"]
  first = _run_quietly(command + [f"--raw_data_dir={raw}"])
  if first:
    return first
  return command + [f"--raw_data_dir={other}"]


def _run_quietly(argv):
  done = subprocess.run(argv, capture_output=True, text=True, check=False)
  return None if done.returncode == 0 else ["false"]


def _symlinked_output(h):
  os.makedirs(in_dir(h, "real"))
  os.symlink(in_dir(h, "real", "out.txt"), in_dir(h, "out.txt"))
  return decoder(h, None, None, f"--decode_from_file={source_file(h)}",
                 f"--decode_to_file={in_dir(h, 'out.txt')}")


def _link_kept(h, done):
  del done
  if not os.path.islink(in_dir(h, "out.txt")):
    return "the link was replaced"
  return same_lines("in.txt", "real/out.txt")(h, None)


def _all_kept(h, done):
  del done
  saved = sorted(glob.glob(os.path.join(in_dir(h, "out"), "ckpt-*.index")))
  return "" if len(saved) == 3 else f"{len(saved)} checkpoints kept, not 3"


def _finite_checkpoint(h, done):
  import numpy as np
  import tensorflow as tf
  del done
  latest = tf.train.latest_checkpoint(in_dir(h, "out"))
  if latest is None:
    return ""
  reader = tf.train.load_checkpoint(latest)
  for name in reader.get_variable_to_shape_map():
    value = reader.get_tensor(name)
    if value.dtype.kind == "f" and not np.all(np.isfinite(value)) or (
        value.dtype.kind == "f" and np.abs(value).max(initial=0) > 1e20):
      return f"{latest} holds {name} with non-finite or huge values"
  return ""


CASES = _streams() + [
    # -- inputs changed between two runs ----------------------------------
    dict(kind="changed input", name="trainer: resumed on a vocabulary made "
         "again", setup=lambda h: _resumed_on(h, _vocab_made_again),
         error="vocabulary is not the one this run trained with",
         own_changes=True),
    dict(kind="changed input", name="trainer: resumed on training shards "
         "made again", setup=lambda h: _resumed_on(h, _shards_made_again),
         error="training shards are not the ones", own_changes=True),
    dict(kind="changed input", name="datagen: a data dir made from other "
         "raw files", setup=_other_raw, error="made from other raw files",
         own_changes=True),
    # -- counts at 0 and beyond ---------------------------------------------
    refused_run("--train_steps=0", "train_steps", "--train_steps=0"),
    refused_run("--hparams=max_length=1, which no example fits",
                "longer than max_length=1", "--hparams=max_length=1"),
    dict(kind="count", name="trainer: --keep_checkpoint_max=0 keeps all",
         command=lambda h: trainer(h, in_dir(h, "out"), "--train_steps=3",
                                   "--save_checkpoints_steps=1",
                                   "--keep_checkpoint_max=0"),
         check=_all_kept),
    # -- run files from elsewhere ----------------------------------------------
    dict(kind="bad file", name="decoder: hparams.json with filter_size 1e20",
         setup=lambda h: _edit_json(h, "hparams.json",
                                    {"filter_size": 10**20}),
         error="hparams.json is damaged: filter_size"),
    dict(kind="bad file", name="decoder: hparams.json with max_length 1e308",
         setup=lambda h: _edit_json(h, "hparams.json", {"max_length": 1e308}),
         error="hparams.json is damaged: max_length"),
    dict(kind="bad file", name="decoder: model.json with 1e12 pieces",
         setup=lambda h: _edit_json(h, "model.json",
                                    {"target_vocab_size": 10**12}),
         error="model.json is damaged: target_vocab_size"),
    # -- outputs and caches ---------------------------------------------------
    dict(kind="odd file", name="decoder: --decode_to_file a symbolic link",
         setup=_symlinked_output, check=_link_kept),
    dict(kind="odd file", name="decoder --xla: a cache folder that cannot be "
         "made", env={"T2T_KERAS_CACHE": "/dev/null/cache"},
         command=lambda h: decoder(h, None, None, "--xla",
                                   f"--decode_from_file={source_file(h)}",
                                   f"--decode_to_file={in_dir(h, 'out.txt')}"),
         check=same_lines("in.txt", "out.txt")),
    # -- a run that diverges ------------------------------------------------------
    dict(kind="diverging", name="trainer: learning_rate=1e30, a save a step",
         command=lambda h: [
             "t2t-trainer", "--problem=translate_synthetic",
             "--hparams_set=transformer_tiny", f"--data_dir={h['data']}",
             f"--output_dir={in_dir(h, 'out')}", "--noeval_bleu",
             "--train_steps=20", "--save_checkpoints_steps=1",
             f"--hparams={TINY},learning_rate_schedule=constant,"
             "learning_rate=1e30"],
         error="became", check=_finite_checkpoint),
]

