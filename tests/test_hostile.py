"""What a hostile user does, made for real: signals to real command
processes, outputs written over inputs or by two commands, files and
values that are not what the run holds. Each case ends in one line (or a
clean success) with nothing the user had lost."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from commands import REPO, python, t2t_command as command
from test_faults import _one_line_error


def _start(name, *args, fresh=True):
  """``python -m t2t_keras.bin.<name>``, stdout and stderr piped: a fresh
  process in a user's environment (TensorFlow's own logging not
  silenced), or (``fresh`` false) through the prefork server, which passes
  the signals on to it."""
  env = dict(os.environ)
  if fresh:
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
  # SIGINT and SIGHUP as a terminal gives them: a suite started in the
  # background (`cmd &` in a script) passes SIGINT on ignored, one under
  # nohup SIGHUP, and a command then keeps ignoring it, as it should.
  def defaults():
    for signum in (signal.SIGINT, signal.SIGHUP):
      signal.signal(signum, signal.SIG_DFL)
  argv = ["-m", f"t2t_keras.bin.{name}", *args]
  return subprocess.Popen([sys.executable, *argv] if fresh else python(*argv),
                          cwd=REPO, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          preexec_fn=defaults)


def _wait_for(process, stream, text, timeout=240):
  """Reads ``stream`` of ``process`` line by line until one holds
  ``text``; returns the lines read."""
  lines, deadline = [], time.time() + timeout
  while time.time() < deadline:
    line = stream.readline()
    if not line:
      break
    lines.append(line)
    if text in line:
      return lines
  process.kill()
  raise AssertionError(f"no {text!r} in: {''.join(lines)[-2000:]}")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT,
                                    signal.SIGHUP])
def test_trainer_saves_and_says_where_it_resumes(tmp_path, signum):
  out = tmp_path / "run"
  args = ["--problem=copy_sequence", "--hparams_set=transformer_tiny",
          "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1,"
          "batch_size=320,max_length=16", f"--output_dir={out}",
          "--local_eval_frequency=5", "--save_checkpoints_secs=0"]
  # SIGTERM's run in a fresh process; the others through the prefork
  # server (the signal passed on), as the handling is the same.
  trainer = _start("t2t_trainer", *args, "--train_steps=100000",
                   fresh=signum == signal.SIGTERM)
  _wait_for(trainer, trainer.stdout, "step 10/")
  trainer.send_signal(signum)
  stdout, stderr = trainer.communicate(timeout=240)
  assert trainer.returncode == 128 + signum, stderr[-2000:]
  assert "Traceback" not in stderr
  last = stderr.strip().splitlines()[-1]
  name = signal.Signals(signum).name
  assert last.startswith(f"error: stopped by {name} at step "), last
  step = int(last.split(" at step ")[1].split(":")[0])
  assert step >= 10 and f"ckpt-{step}" in last and "resumes" in last
  assert (out / "checkpoint").exists()
  again = command("t2t_trainer", *args, f"--train_steps={step + 1}")
  assert again.returncode == 0, again.stderr[-2000:]
  assert f"at step {step}" in again.stdout, again.stdout


@pytest.fixture
def sources(trained_run, tmp_path):
  """30,000 source lines: a decode of them takes long enough to stop
  (5,000 took 4.4 s on a fast CPU, done before the signal came)."""
  del trained_run
  path = tmp_path / "sources.txt"
  path.write_text("the big dogs see a small cat near these old houses\n" *
                  30000, encoding="utf-8")
  return path


def _decoder_args(trained_run):
  data, out = trained_run
  return ["--problem=translate_synthetic", f"--data_dir={data}",
          f"--output_dir={out}"]


def _decode(trained_run, sources, target, *more):
  """t2t-decoder (through the prefork server) from ``sources`` to
  ``target``."""
  return command("t2t_decoder", *_decoder_args(trained_run),
                 f"--decode_from_file={sources}",
                 f"--decode_to_file={target}", *more)


def _leftovers(folder):
  return sorted(p.name for p in folder.iterdir()
                if p.name.endswith((".partial", ".lock")))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_decoder_stopped_leaves_the_old_output(trained_run, sources,
                                               tmp_path, signum):
  target = tmp_path / "out.txt"
  target.write_text("what the user had\n", encoding="utf-8")
  decoder = _start("t2t_decoder", *_decoder_args(trained_run),
                   f"--decode_from_file={sources}",
                   f"--decode_to_file={target}", "--window_lines=64",
                   fresh=signum == signal.SIGTERM)
  _wait_for(decoder, decoder.stderr, "decoding with")
  time.sleep(1)
  decoder.send_signal(signum)
  _, stderr = decoder.communicate(timeout=240)
  assert decoder.returncode == 128 + signum, stderr[-2000:]
  assert "Traceback" not in stderr, stderr[-3000:]
  name = signal.Signals(signum).name
  assert stderr.strip().splitlines()[-1] == (
      f"error: stopped by {name}; no output was left half-written")
  assert target.read_text(encoding="utf-8") == "what the user had\n"
  assert _leftovers(tmp_path) == []


def test_a_stop_whose_exception_was_lost_stops_the_next_batch():
  """A signal's exception raised inside a finalizer (JAX's garbage-collector
  callback, seen under load) is dropped by Python; it is recorded instead
  (errors.catch_lost_signals, silently) and decoding stops before the next
  batch (errors.check_signals)."""
  from t2t_keras import errors
  from t2t_keras.decoding.backends.backend import Backend

  class Finalized:
    def __del__(self):   # where the handler's raise came in
      raise errors.Interrupted(signal.SIGTERM)

  class Echo(Backend):
    hparams = None

    def prepare(self, line):
      return line, False

    def batches(self, items):
      return [[i] for i in range(len(items))]

    def decode_batch(self, items, prefixes):
      if items == ["b"]:
        Finalized()   # made and dropped: its __del__ raises, Python drops it
      return [(item.upper(), 1) for item in items]

  previous = errors.catch_lost_signals()
  try:
    with pytest.raises(errors.Interrupted, match="stopped by SIGTERM"):
      Echo().decode(["a", "b", "c"])
    errors._RECEIVED.clear()
    assert Echo().decode(["a", "c"]) == ["A", "C"]
  finally:
    sys.unraisablehook = previous
    errors._RECEIVED.clear()


def test_decoder_output_that_is_an_input_or_busy_is_refused(
    trained_run, sources, tmp_path):
  before = sources.read_text(encoding="utf-8")
  same = _decode(trained_run, sources, sources)
  assert same.returncode == 2, same.stderr[-2000:]
  assert same.stderr.strip().splitlines() == [
      f"error: --decode_to_file={sources} is also the input "
      "--decode_from_file: writing it would wipe the input; write elsewhere"]
  assert sources.read_text(encoding="utf-8") == before
  # A mistyped checkpoint: one line, and the last good output stays.
  target = tmp_path / "out.txt"
  target.write_text("the last good output\n", encoding="utf-8")
  bad = _decode(trained_run, sources, target,
                f"--checkpoint_path={tmp_path / 'no_such_ckpt'}")
  assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
  assert target.read_text(encoding="utf-8") == "the last good output\n"
  # Another live command writing the same file (its lock names a live pid).
  lock = tmp_path / "out.txt.lock"
  sleeper = subprocess.Popen(["sleep", "60"])
  try:
    lock.write_text(str(sleeper.pid), encoding="utf-8")
    busy = _decode(trained_run, sources, target)
    assert busy.returncode == 2, busy.stderr[-2000:]
    assert busy.stderr.strip().splitlines() == [
        f"error: {target} is being written by another command (pid "
        f"{sleeper.pid}, {lock}); wait for it, or write elsewhere"]
  finally:
    sleeper.kill()
    sleeper.wait()
  # Its process gone, the lock is taken over.
  small = tmp_path / "three.txt"
  small.write_text("the cat\na dog\nthe houses\n", encoding="utf-8")
  done = command("t2t_decoder", *_decoder_args(trained_run),
                 f"--decode_from_file={small}", f"--decode_to_file={target}",
                 "--decode_hparams=beam_size=1")
  assert done.returncode == 0, done.stderr[-2000:]
  assert len(target.read_text(encoding="utf-8").splitlines()) == 3
  assert _leftovers(tmp_path) == []


def test_output_file_and_dir_appear_whole_or_not_at_all(tmp_path):
  from t2t_keras.io import outputs
  target = tmp_path / "file"
  target.write_bytes(b"before")
  with pytest.raises(RuntimeError):
    with outputs.output_file(str(target)) as f:
      f.write(b"half")
      raise RuntimeError("stopped")
  assert target.read_bytes() == b"before"
  with outputs.output_file(str(target)) as f:
    f.write(b"after")
    assert target.read_bytes() == b"before"
  assert target.read_bytes() == b"after"
  version = tmp_path / "export" / "7"
  version.parent.mkdir()
  with pytest.raises(RuntimeError):
    with outputs.output_dir(str(version)) as partial:
      open(os.path.join(partial, "variables"), "wb").close()
      raise RuntimeError("stopped")
  assert os.listdir(version.parent) == []
  with outputs.output_dir(str(version)) as partial:
    open(os.path.join(partial, "saved_model.pb"), "wb").close()
    assert not version.exists()
  assert os.listdir(version) == ["saved_model.pb"]
  assert sorted(os.listdir(version.parent)) == ["7"]
  assert _leftovers(tmp_path) == []
  # A symbolic link is written at its target, and stays a link.
  (tmp_path / "real").mkdir()
  link = tmp_path / "link"
  link.symlink_to(tmp_path / "real" / "out")          # dangling at first
  for text in (b"one", b"two"):
    with outputs.output_file(str(link)) as f:
      f.write(text)
    assert link.is_symlink() and (tmp_path / "real" / "out").read_bytes() \
        == text
  assert _leftovers(tmp_path) == []


def test_exporter_stopped_leaves_no_version(trained_run, tmp_path):
  """SIGTERM at any point of an export: the export root holds a whole
  version or none, and nothing half-written."""
  root = tmp_path / "export"
  exporter = _start("t2t_exporter", *_decoder_args(trained_run),
                    f"--export_dir={root}", "--export_version=5")
  time.sleep(12)     # the import and the model's load; then mid-export
  exporter.send_signal(signal.SIGTERM)
  _, stderr = exporter.communicate(timeout=240)
  assert "Traceback" not in stderr, stderr[-2000:]
  versions = sorted(os.listdir(root)) if root.exists() else []
  if exporter.returncode == 0:
    assert versions == ["5"]
  else:    # stopped by our handler, or by the default one while importing;
    # a signal after the rename leaves the whole version
    assert exporter.returncode in (128 + signal.SIGTERM, -signal.SIGTERM), \
        stderr[-2000:]
    assert versions in ([], ["5"]), (versions, stderr[-2000:])
  for v in versions:
    assert (root / v / "saved_model.pb").exists()


def test_a_signal_whose_exception_a_library_changed_is_one_line(tmp_path):
  """A stop signal's exception raised inside a C++ call can come out as
  another type (pybind11's RuntimeError "MISMATCH of original and
  normalized active exception types", seen under tf.saved_model.save):
  the command still ends in the signal's one line and exit code."""
  script = tmp_path / "command.py"
  script.write_text(
      "import os, signal, time\n"
      "from t2t_keras.bin import common\n"
      "from t2t_keras.errors import Interrupted\n"
      "def main():\n"
      "  try:\n"
      "    os.kill(os.getpid(), signal.SIGTERM)\n"
      "    time.sleep(5)\n"
      "  except Interrupted:\n"
      "    raise RuntimeError('MISMATCH of original and normalized') from None\n"
      "common.run(main, tensorflow=False)\n", encoding="utf-8")
  done = subprocess.run([sys.executable, str(script)], capture_output=True,
                        text=True, timeout=120, cwd=REPO, check=False)
  assert done.returncode == 128 + signal.SIGTERM, done.stderr
  assert done.stderr.strip().startswith("error: stopped by SIGTERM"), \
      done.stderr
  assert "Traceback" not in done.stderr


def test_a_vocabulary_other_than_the_runs_is_refused(trained_run, tmp_path):
  """A --data_dir whose vocabulary is not the run's (its SHA-256 differs
  from model.json's record): one line before anything is loaded, from the
  decoder, the scorer, the exporter and t2t-attention."""
  import json
  import shutil
  data, out = trained_run
  run = tmp_path / "run"
  shutil.copytree(out, run)
  spec = json.loads((run / "model.json").read_text(encoding="utf-8"))
  assert len(spec["vocab_sha256"]) == 64
  spec["vocab_sha256"] = "0" * 64
  (run / "model.json").write_text(json.dumps(spec), encoding="utf-8")
  line = tmp_path / "line.txt"
  line.write_text("the cat\tdi jeba\n", encoding="utf-8")
  common = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={run}"]
  for name, args in (
      ("t2t_decoder", [f"--decode_from_file={line}"]),
      ("t2t_decoder", [f"--score_file={line}"]),
      ("t2t_exporter", [f"--export_dir={tmp_path / 'export'}"]),
      ("t2t_attention", ["--sentence=the cat", f"--out_dir={tmp_path}/p"])):
    done = command(name, *common, *args)
    assert done.returncode == 2, (name, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: {data}'s vocabulary is not the one "
                                f"{run} was trained with"), (name, lines)
    assert "Traceback" not in done.stderr
  assert not (tmp_path / "export").exists()
  assert not (tmp_path / "p").exists()


BAD_HPARAMS = (
    ("num_heads=0", "--hparams: num_heads=0 is out of range: expected "
     "num_heads >= 1"),
    ("hidden_size=-8", "--hparams: hidden_size=-8 is out of range: expected "
     "hidden_size >= 1"),
    ("filter_size=0", "--hparams: filter_size=0 is out of range: expected "
     "filter_size >= 1"),
    ("layer_prepostprocess_dropout=1.5", "--hparams: "
     "layer_prepostprocess_dropout=1.5 is out of range: expected "
     "layer_prepostprocess_dropout in [0, 1)"),
)


def test_hparams_that_cannot_build_a_model_write_nothing(tmp_path):
  """One line before hparams.json is written, so that the corrected
  command then trains in the same --output_dir."""
  out = tmp_path / "run"
  args = ["--problem=copy_sequence", "--hparams_set=transformer_tiny",
          f"--output_dir={out}", "--train_steps=1"]
  for override, message in BAD_HPARAMS:
    bad = command("t2t_trainer", *args, f"--hparams={override}")
    assert bad.returncode == 2, (override, bad.stderr[-2000:])
    assert bad.stderr.strip().splitlines() == [f"error: {message}"]
    assert not out.exists(), override
  good = command("t2t_trainer", *args,
                 "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1")
  assert good.returncode == 0, good.stderr[-2000:]


@pytest.mark.parametrize("name,field,value,problem", [
    ("hparams.json", "filter_size", 10**20, "larger than 2,147,483,647"),
    ("hparams.json", "max_length", 1e308, "larger than 2,147,483,647"),
    ("hparams.json", "hidden_size", 64.5, "a fraction"),
    ("hparams.json", "label_smoothing", 2.0, "label_smoothing=2.0 is out "
     "of range"),
    ("model.json", "target_vocab_size", 10**12, "expected a vocabulary "
     "size")])
def test_run_files_from_elsewhere_are_checked(trained_run, tmp_path, name,
                                              field, value, problem):
  """A value of another type or out of range in a run's hparams.json or
  model.json (a run from someone else) is named as damage in one line:
  it was a Keras error while building, or not noticed at all."""
  data, out = trained_run
  run = tmp_path / "run"
  shutil.copytree(out, run)
  values = json.loads((run / name).read_text(encoding="utf-8"))
  values[field] = value
  (run / name).write_text(json.dumps(values), encoding="utf-8")
  (tmp_path / "in.txt").write_text("a b\n", encoding="utf-8")
  done = command("t2t_decoder", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={run}",
                 f"--decode_from_file={tmp_path / 'in.txt'}")
  assert done.returncode == 2, done.stderr[-2000:]
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith(
      f"error: {run / name} is damaged: ") and problem in lines[0], lines


def test_saved_model_dirs_that_are_not_one(trained_run, tmp_path):
  del trained_run
  root = tmp_path / "export"
  (root / "3").mkdir(parents=True)
  (root / "17").mkdir()
  (root / "17" / "saved_model.pb").write_bytes(b"")
  half = tmp_path / "half"
  (half / "variables").mkdir(parents=True)
  for path, line in (
      (tmp_path / "nowhere", f"--saved_model_dir={tmp_path / 'nowhere'} "
       "does not exist"),
      (root, f"--saved_model_dir={root} is an export root: give a version "
       f"directory, e.g. {root / '17'}"),
      (half, f"--saved_model_dir={half} holds no saved_model.pb: not a "
       "SavedModel, or an export that did not finish"),
      (root / "17", f"--saved_model_dir={root / '17'} has no variables/ "
       "folder: an incomplete SavedModel; export it again")):
    done = subprocess.run(
        python("-m", "t2t_keras.bin.t2t_decoder", f"--saved_model_dir={path}"),
        input="a line\n", cwd=REPO, capture_output=True, text=True,
        timeout=300, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"error: {line}"]


def test_a_lock_naming_our_own_pid_is_taken_over(tmp_path):
  """A restarted container can give the new trainer the pid that wrote the
  lock; that lock is stale, not held."""
  import json
  import socket
  from t2t_keras.io.run_lock import RunLock
  lock = tmp_path / "trainer.lock"
  lock.write_text(json.dumps({"pid": os.getpid(),
                              "host": socket.gethostname()}))
  said = []
  with RunLock(str(tmp_path), log=said.append):
    assert json.loads(lock.read_text())["pid"] == os.getpid()
  assert said and "is gone" in said[0], said
  assert not lock.exists()


def _limited(limit, name, *args):
  """``python -m t2t_keras.bin.<name>`` under a file-size limit of
  ``limit`` bytes: a write past it fails with EFBIG, as on a full disk."""
  import resource

  def cap():
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
  return subprocess.run(python("-m", f"t2t_keras.bin.{name}", *args),
                        cwd=REPO, capture_output=True, text=True,
                        preexec_fn=cap, timeout=600, check=False)


def test_a_full_disk_under_the_decoder_and_datagen(trained_run, tmp_path):
  data, run = trained_run
  source = tmp_path / "in.txt"
  source.write_text("the big red dog sees a small cat\n" * 2000,
                    encoding="utf-8")
  target = tmp_path / "out.txt"
  target.write_text("the user's earlier output\n", encoding="utf-8")
  done = _limited(8192, "t2t_decoder", "--problem=translate_synthetic",
                  f"--data_dir={data}", f"--output_dir={run}",
                  f"--decode_from_file={source}",
                  f"--decode_to_file={target}",
                  "--decode_hparams=beam_size=1")
  _one_line_error(done, f"could not write {target}: File too large")
  assert target.read_text(encoding="utf-8") == "the user's earlier output\n"
  # The windows done stay hidden for the rerun, which goes on from there.
  assert sorted(os.listdir(tmp_path)) == [
      ".out.txt.resume", ".out.txt.resume.json", "in.txt", "out.txt"]
  done = command("t2t_decoder", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={run}",
                 f"--decode_from_file={source}", f"--decode_to_file={target}",
                 "--decode_hparams=beam_size=1")
  assert done.returncode == 0, done.stderr
  assert sorted(os.listdir(tmp_path)) == ["in.txt", "out.txt"]
  assert target.read_text(encoding="utf-8").count("\n") == 2000
  new = tmp_path / "data"
  done = _limited(100_000, "t2t_datagen", "--problem=translate_synthetic",
                  f"--data_dir={new}")
  _one_line_error(done, f"could not write the train shards in {new}")
  assert not [n for n in os.listdir(new) if n.endswith(".partial")]


def test_a_flag_absl_cannot_read_is_one_line():
  for flag, text in (("--train_steps=abc", "flag --train_steps=abc"),
                     ("--train_step=4", "Did you mean: train_steps")):
    done = subprocess.run(python("-m", "t2t_keras.bin.t2t_trainer", flag),
                          cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    _one_line_error(done, text)


def test_a_full_disk_under_the_trainer_names_its_cause(trained_run, tmp_path):
  data, _ = trained_run
  run = tmp_path / "run"
  args = ("--problem=translate_synthetic", "--hparams_set=transformer_tiny",
          "--hparams=hidden_size=64,filter_size=128,num_hidden_layers=1,"
          "batch_size=1024", f"--data_dir={data}", f"--output_dir={run}",
          "--train_steps=20", "--save_checkpoints_steps=10", "--noeval_bleu")
  done = _limited(300_000, "t2t_trainer", *args)
  _one_line_error(done, f"could not save checkpoint 10 in {run} (File too "
                  "large); no checkpoint was kept")
  assert not [n for n in os.listdir(run) if "temp" in n], os.listdir(run)
  done = command("t2t_trainer", *args)
  assert done.returncode == 0, done.stderr[-2000:]
  assert (run / "ckpt-20.index").exists()


def test_the_decoder_is_a_well_behaved_filter(trained_run, sources):
  """`t2t-decoder | head -1`: the reader leaves after one line and the
  decoder ends as a filter does on SIGPIPE (141), saying nothing; started
  with stdout or stdin closed (`>&-`, `<&-`), one line and exit 2."""
  args = [*_decoder_args(trained_run), "--decode_hparams=extra_length=3"]
  with open(sources, "rb") as source:
    decoder = subprocess.Popen(
        python("-m", "t2t_keras.bin.t2t_decoder", *args), stdin=source,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert decoder.stdout.readline()
    decoder.stdout.close()
    stderr = decoder.stderr.read().decode()
    assert decoder.wait(timeout=240) == 128 + signal.SIGPIPE, stderr
  assert "Traceback" not in stderr and "Error" not in stderr, stderr
  for closed, said in ((1, "output"), (0, "input")):
    with open(sources, "rb") as source:
      done = subprocess.run(
          python("-m", "t2t_keras.bin.t2t_decoder", *args),
          stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
          cwd=REPO, timeout=240, check=False,
          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
          preexec_fn=lambda fd=closed: os.close(fd))
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"error: standard {said} is closed; "), lines


def test_a_max_length_no_example_fits_is_refused_first(trained_run,
                                                       tmp_path):
  """--hparams=max_length=1 was a StopIteration after the run folder was
  written: now one line, before it is."""
  data, _ = trained_run
  done = command("t2t_trainer", "--problem=translate_synthetic",
                 f"--data_dir={data}", "--hparams_set=transformer_tiny",
                 "--hparams=max_length=1", "--train_steps=2",
                 f"--output_dir={tmp_path / 'run'}")
  assert done.returncode == 2, done.stderr[-2000:]
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: all ") and \
      "training examples are longer than max_length=1 tokens" in lines[0]
  assert not (tmp_path / "run").exists()


def test_counts_that_mean_none_are_refused_or_none(tmp_path):
  """--train_steps=0 trained the hparams' 100,000 steps: now one line
  before anything is written. --keep_checkpoint_max=0 was a ValueError
  after the run folder was written: now it keeps every checkpoint, as
  TensorFlow's Saver does."""
  common = ["--problem=copy_sequence", "--hparams_set=transformer_tiny",
            "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1,"
            "batch_size=320,max_length=16", "--eval_steps=1",
            "--save_checkpoints_secs=0"]
  done = command("t2t_trainer", *common, "--train_steps=0",
                 f"--output_dir={tmp_path / 'none'}")
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines() == [
      "error: t2t_trainer.py: flag --train_steps=0: 0 is not a positive "
      "integer"], done.stderr
  assert not (tmp_path / "none").exists()
  out = tmp_path / "all"
  done = command("t2t_trainer", *common, "--train_steps=3",
                 "--save_checkpoints_steps=1", "--keep_checkpoint_max=0",
                 f"--output_dir={out}")
  assert done.returncode == 0, done.stderr[-2000:]
  assert all((out / f"ckpt-{s}.index").exists() for s in (1, 2, 3))
