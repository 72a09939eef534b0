"""More cases of scripts/hostile_user.py (the format of hostile_cases.py):
the surfaces whose writes go through staging (t2t-datagen --overwrite,
t2t-import, --decode_to_file onto special files) and the reads that check
before they trust (checkpoints, tensor2tensor runs, JSON records)."""

import json
import os
import shutil
import signal
import subprocess
import time

from hostile_steps import (decoder, finish, in_dir, source_file,
                           start, trainer, write_file)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "t2t")
PAIRS = [("a small dog runs", "kemi jeba dog"), ("the old man sees a cat",
                                                 "man old cat jeba")] * 30


def _raw(h, name, pairs, cut=0):
  """Raw files for translate_local; train.de ``cut`` lines short."""
  raw = in_dir(h, name)
  os.makedirs(raw)
  for split, rows in (("train", pairs), ("dev", pairs[:10])):
    targets = rows[:len(rows) - cut] if split == "train" else rows
    write_file(os.path.join(raw, f"{split}.en"),
               "".join(s + "\n" for s, _ in rows))
    write_file(os.path.join(raw, f"{split}.de"),
               "".join(t + "\n" for _, t in targets))
  return raw


def _datagen(h, raw, *more):
  return ["t2t-datagen", "--problem=translate_local", "--source_lang=en",
          "--target_lang=de", "--vocab_size=300",
          f"--data_dir={in_dir(h, 'local')}", f"--raw_data_dir={raw}", *more]


def _local_data(h):
  done = subprocess.run(_datagen(h, _raw(h, "raw_old", PAIRS)),
                        capture_output=True, text=True, check=False)
  assert done.returncode == 0, done.stderr


def _overwrite_unparallel(h):
  _local_data(h)
  return _datagen(h, _raw(h, "raw_new", PAIRS[1:], cut=3), "--overwrite")


def _killed_overwrite(h, argv):
  """SIGKILL while --overwrite makes the new data; then the old raw files
  again, without --overwrite: accepted, the old data kept."""
  del argv
  process = start(_datagen(h, _raw(h, "raw_new", PAIRS[1:]), "--overwrite"))
  stage = in_dir(h, "local", ".overwrite-translate_local.staging")
  while process.poll() is None and not os.path.isdir(stage):
    time.sleep(0.01)
  process.send_signal(signal.SIGKILL)
  finish(process)
  return subprocess.run(_datagen(h, in_dir(h, "raw_old")),
                        capture_output=True, text=True, check=False)


def _import(h, run="tiny", data=None, *more):
  return ["t2t-import", f"--t2t_output_dir={run}",
          f"--t2t_data_dir={data or os.path.join(FIXTURES, 'data')}",
          f"--output_dir={in_dir(h, 'imported')}",
          f"--data_dir={in_dir(h, 'idata')}", *more]


def _t2t_copy(h, damage=None, run="tiny"):
  """A copy of a reference run (and its data dir) with ``damage(run,
  data)`` done to it; the import command."""
  copy, data = in_dir(h, "t2t_run"), in_dir(h, "t2t_data")
  shutil.copytree(os.path.join(FIXTURES, run), copy)
  shutil.copytree(os.path.join(FIXTURES, "data_separate" if run ==
                               "separate" else "data"), data)
  if damage:
    damage(copy, data)
  return _import(h, copy, data)


def _edit_hparams(change):
  def damage(run, data):
    del data
    path = os.path.join(run, "hparams.json")
    with open(path, encoding="utf-8") as f:
      hparams = json.load(f)
    change(hparams)
    write_file(path, json.dumps(hparams))
  return damage


def _vocab_lines(change):
  def damage(run, data):
    del run
    path = os.path.join(data, "vocab.translate_ende_multi30k_local.2048."
                        "subwords")
    with open(path, encoding="utf-8") as f:
      lines = f.read().split("\n")
    write_file(path, "\n".join(change(lines)))
  return damage


def _other_features(run, data):
  del run
  import tensorflow as tf
  for name in os.listdir(data):
    if "-train-" in name or "-dev-" in name:
      with tf.io.TFRecordWriter(os.path.join(data, name)) as w:
        w.write(tf.train.Example(features=tf.train.Features(feature={
            "image": tf.train.Feature(int64_list=tf.train.Int64List(
                value=[1, 2]))})).SerializeToString())


def _empty_train(run, data):
  del run
  for name in os.listdir(data):
    if "-train-" in name:
      write_file(os.path.join(data, name), b"")


def _checkpoint_file(change):
  def damage(run, data):
    del data
    path = os.path.join(run, "model.ckpt-3000.data-00000-of-00001")
    change(path)
  return damage


def _cut_half(path):
  with open(path, "rb") as f:
    data = f.read()
  write_file(path, data[:len(data) // 2])


def _killed_import(h, argv):
  """SIGKILL once the run's staging folder holds hparams.json; the same
  command again: the import, whole."""
  process = start(argv)
  staged = in_dir(h, ".imported.staging", "hparams.json")
  while process.poll() is None and not os.path.exists(staged):
    time.sleep(0.01)
  process.send_signal(signal.SIGKILL)
  finish(process)
  return subprocess.run(argv, capture_output=True, text=True, check=False)


def _interrupted_import(h, argv):
  process = start(argv)
  staged = in_dir(h, ".imported.staging")
  while process.poll() is None and not os.path.exists(staged):
    time.sleep(0.01)
  process.send_signal(signal.SIGINT)
  return finish(process)


def _imported_whole(h, done):
  del done
  ckpt = in_dir(h, "imported", "ckpt-3000.index")
  leftovers = [n for n in os.listdir(h["dir"]) if n.endswith(".staging")]
  return ("" if os.path.isfile(ckpt) and not leftovers else
          f"no {ckpt}" if not os.path.isfile(ckpt) else
          f"left {leftovers[0]}")


def _nothing_imported(h, done):
  del done
  there = [n for n in ("imported", ".imported.staging")
           if os.path.exists(in_dir(h, n))]
  return f"{there[0]} was left" if there else ""


def _special(kind):
  def setup(h):
    path = in_dir(h, "out")
    if kind == "device":
      os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))   # as /dev/null
    else:
      os.mkfifo(path)
    return decoder(h, None, None, f"--decode_from_file={source_file(h)}",
                   f"--decode_to_file={path}")
  return setup


def _into_fifo(h, argv):
  reader = subprocess.Popen(["cat", in_dir(h, "out")], stdout=subprocess.PIPE)
  done = subprocess.run(argv, capture_output=True, text=True, check=False)
  got = reader.communicate(timeout=60)[0].count(b"\n")
  if got != 20:
    done.stderr += f"\nerror: the FIFO's reader got {got} of 20 lines"
    done.returncode = 2
  return done


def _still(kind):
  def check(h, done):
    del done
    mode = os.stat(in_dir(h, "out")).st_mode
    import stat
    is_kind = stat.S_ISCHR(mode) if kind == "device" else stat.S_ISFIFO(mode)
    return "" if is_kind else f"the {kind} was replaced"
  return check


def _to_stdout_pipe(h):
  return ["bash", "-c", " ".join(decoder(h, None, None,
                                         f"--decode_from_file={source_file(h)}",
                                         "--decode_to_file=/dev/stdout")) +
          f" | wc -l > {in_dir(h, 'count')}"]


def _count_is(n):
  def check(h, done):
    del done
    with open(in_dir(h, "count"), encoding="utf-8") as f:
      got = int(f.read())
    return "" if got == n else f"{got} lines through the pipe, not {n}"
  return check


def _max_length_kept(h, done):
  del done
  with open(in_dir(h, "imported", "hparams.json"), encoding="utf-8") as f:
    return "" if json.load(f)["max_length"] == 2048 else "max_length not 2048"


def _cut_record(h):
  done = subprocess.run(_import(h, os.path.join(FIXTURES, "tiny")),
                        capture_output=True, text=True, check=False)
  assert done.returncode == 0, done.stderr
  path = in_dir(h, "idata", "t2t_import.json")
  with open(path, "rb") as f:
    text = f.read()
  write_file(path, text[:len(text) // 2])
  return ["t2t-decoder", "--problem=t2t_import",
          f"--data_dir={in_dir(h, 'idata')}",
          f"--output_dir={in_dir(h, 'imported')}",
          f"--decode_from_file={source_file(h)}"]


def _case(kind, name, **entries):
  return dict(kind=kind, name=name, **entries)


TINY = os.path.join(FIXTURES, "tiny")
CASES = [
    _case("lost data", "datagen --overwrite: new train files not parallel",
          setup=_overwrite_unparallel, error="parallel files differ"),
    _case("lost data", "datagen --overwrite: SIGKILL, then the old files",
          setup=lambda h: _local_data(h) or ["true"],
          during=_killed_overwrite),
    _case("lost data", "import: SIGKILL after hparams.json, same command",
          command=lambda h: _import(h, TINY), during=_killed_import,
          own_changes=True, check=_imported_whole),
    _case("signal", "import: Ctrl-C midway",
          command=lambda h: _import(h, TINY), during=_interrupted_import,
          exit=130, error="stopped by SIGINT", own_changes=True,
          check=_nothing_imported),
    _case("special file", "decoder: --decode_to_file onto a device",
          setup=_special("device"), own_changes=True,
          check=_still("device")),
    _case("special file", "decoder: --decode_to_file onto a FIFO",
          setup=_special("fifo"), during=_into_fifo, own_changes=True,
          check=_still("fifo")),
    _case("special file", "decoder: --decode_to_file=/dev/stdout | wc -l",
          command=_to_stdout_pipe, own_changes=True, check=_count_is(20)),
    _case("special file", "decoder: standard output > /dev/full",
          command=lambda h: ["bash", "-c", " ".join(decoder(
              h, None, None, f"--decode_from_file={source_file(h)}")) +
                             " > /dev/full"],
          error="could not write standard output"),
    _case("bad file", "import: a vocabulary one line short",
          setup=lambda h: _t2t_copy(h, _vocab_lines(lambda l: l[:5] + l[6:])),
          error="it is not this run's input vocabulary"),
    _case("bad file", "import: a duplicated subtoken",
          setup=lambda h: _t2t_copy(h, _vocab_lines(
              lambda l: l[:5] + [l[7]] + l[6:-2] + l[-1:])),
          error="repeats the subtoken"),
    _case("bad file", "import: shards of other features",
          setup=lambda h: _t2t_copy(h, _other_features),
          error="not the int64 inputs and targets"),
    _case("bad file", "import: empty train shards",
          setup=lambda h: _t2t_copy(h, _empty_train),
          error="hold no examples"),
    _case("bad file", "import: separate vocabularies, the target's given",
          setup=lambda h: _t2t_copy(h, None, "separate") + [
              "--vocab_file=" + in_dir(h, "t2t_data", "vocab.translate_ende_"
                                       "multi30k_separate.1024.subwords.de")],
          error="not this run's input vocabulary"),
    _case("right result", "import: separate vocabularies, found",
          setup=lambda h: _t2t_copy(h, None, "separate"), own_changes=True,
          check=_imported_whole),
    _case("bad file", "import: a checkpoint data shard missing",
          setup=lambda h: _t2t_copy(h, _checkpoint_file(os.remove)),
          error="is missing"),
    _case("bad file", "import: a checkpoint data shard cut in half",
          setup=lambda h: _t2t_copy(h, _checkpoint_file(_cut_half)),
          error="cut short or damaged"),
    _case("bad file", "import: hparams.json without num_heads",
          setup=lambda h: _t2t_copy(h, _edit_hparams(
              lambda p: p.pop("num_heads"))),
          error="num_heads is missing"),
    _case("right result", "import: max_length 0 (tensor2tensor: batch size)",
          setup=lambda h: _t2t_copy(h, _edit_hparams(
              lambda p: p.update(max_length=0))), own_changes=True,
          check=_max_length_kept),
    _case("bad file", "import: no flags.txt, no --t2t_problem",
          setup=lambda h: _t2t_copy(h, lambda run, data: os.remove(
              os.path.join(run, "flags.txt"))),
          error="give it with --t2t_problem"),
    _case("right result", "import: no flags.txt, --t2t_problem given",
          setup=lambda h: _t2t_copy(h, lambda run, data: os.remove(
              os.path.join(run, "flags.txt"))) + [
                  "--t2t_problem=translate_ende_multi30k_local"],
          own_changes=True, check=_imported_whole),
    _case("lost data", "import: --output_dir holds another run's checkpoints",
          setup=lambda h: (shutil.copytree(h["run"], in_dir(h, "imported"))
                           and _import(h, TINY)),
          error="t2t-import writes a new run"),
    _case("bad file", "decoder: a cut t2t_import.json", setup=_cut_record,
          error="t2t_import.json is damaged", own_changes=True),
    _case("bad setting", "trainer: --worker_timeout_secs=nan",
          command=lambda h: trainer(h, in_dir(h, "run"),
                                    "--worker_timeout_secs=nan"),
          error="is not a number"),
]
