"""Faults that lose nothing and say one line: an unreadable checkpoint, a
full disk, damaged run files, two trainers on one directory."""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest

from commands import t2t_command
from conftest import TINY_RUN
from t2t_keras.io import checkpoint_io
from t2t_keras.errors import UserError
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras.training.config import CheckpointPolicy
from t2t_keras.training.run import RunConfig, train
from t2t_keras.io.run_lock import LOCK_FILE, RunLock

# Installed by --t2t_usr_dir: every checkpoint save after the first
# ``FULL_AFTER`` fails as on a full disk, leaving a partial directory.
FULL_DISK = '''
import errno, os
import tensorflow as tf
_save, _count = tf.train.CheckpointManager.save, [0]
def save(self, checkpoint_number=None, **kwargs):
  _count[0] += 1
  if _count[0] > int(os.environ["FULL_AFTER"]):
    os.makedirs(os.path.join(self.directory, "ckpt-x_temp"), exist_ok=True)
    raise OSError(errno.ENOSPC, "No space left on device")
  return _save(self, checkpoint_number=checkpoint_number, **kwargs)
tf.train.CheckpointManager.save = save
'''


@pytest.fixture(scope="module")
def small_run(trained_run, tmp_path_factory):
  """(data_dir, run_dir) of a tiny run with ckpt-10, -20 and -30."""
  data, _ = trained_run
  out = str(tmp_path_factory.mktemp("faults") / "run")
  _train(data, out, 30)
  return data, out


@pytest.fixture()
def run_copy(small_run, tmp_path):
  """A copy of ``small_run`` to damage."""
  data, out = small_run
  copy = str(tmp_path / "run")
  shutil.copytree(out, copy)
  # The state file names checkpoints by path relative to its directory.
  return data, copy


def _one_line_error(done, *expected):
  assert done.returncode == 2, done.stderr[-2000:]
  assert "Traceback" not in done.stderr, done.stderr[-2000:]
  errors = [l for l in done.stderr.splitlines() if l.startswith("error: ")]
  assert len(errors) == 1, done.stderr[-2000:]
  for text in expected:
    assert text in errors[0], errors[0]
  return errors[0]


def _truncate(path):
  _truncate_file(glob.glob(path + ".data-*")[0])


def _truncate_file(path):
  with open(path, "r+b") as f:
    f.truncate(os.path.getsize(path) // 2)


def _train(data, out, steps, **overrides):
  """Trains the tiny run in ``out`` to ``steps``, saving every 10 steps;
  returns its log lines."""
  lines = []
  train(RunConfig("translate_synthetic", "transformer_tiny", out,
                  data_dir=data, train_steps=steps, hparams_overrides=TINY_RUN,
                  eval_bleu=False, checkpoints=CheckpointPolicy(
                      every_secs=None, every_steps=10), **overrides),
        log=lines.append)
  return lines


def test_decoder_names_an_unreadable_checkpoint_and_a_good_one(run_copy):
  data, out = run_copy
  paths = checkpoint_io.listed(out)
  assert len(paths) >= 2
  _truncate(paths[-1])
  source = os.path.join(out, "in.txt")
  with open(source, "w", encoding="utf-8") as f:
    f.write("a b c\n")
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--data_dir={data}", f"--output_dir={out}",
                     "--decode_hparams=beam_size=1",
                     f"--decode_from_file={source}")
  line = _one_line_error(done, f"checkpoint {paths[-1]} does not read",
                         f"--checkpoint_path={paths[-2]}")
  assert "IndexError" in line
  done = t2t_command("t2t_avg_all", f"--model_dir={out}", "--n=2")
  _one_line_error(done, f"checkpoint {paths[-1]} does not read",
                  "move it aside")


def test_trainer_skips_unreadable_checkpoints_and_finishes(run_copy):
  data, out = run_copy
  paths = checkpoint_io.listed(out)
  _truncate(paths[-1])
  os.remove(paths[-2] + ".index")                 # and one without an index
  log = _train(data, out, 40)
  skipped = [l for l in log if l.startswith("skipped ")]
  assert len(skipped) == 2, log
  assert f"resuming from {paths[-3]}" in skipped[-1]
  assert any(l.startswith(f"resumed from {paths[-3]}") for l in log), log
  assert checkpoint_io.listed(out)[-1].endswith("ckpt-40")
  moved = os.listdir(os.path.join(out, checkpoint_io.UNREADABLE_DIR))
  assert any(m.startswith(os.path.basename(paths[-1]) + ".data") for m in moved)
  assert all(checkpoint_io.reads(p) is None
             for p in checkpoint_io.listed(out))


def test_unreadable_best_checkpoint_is_replaced(run_copy):
  data, out = run_copy
  _train(data, out, 40, eval_every=10)            # keeps best/ by dev loss
  best = checkpoint_io.listed(os.path.join(out, "best"))[-1]
  _truncate(best)
  log = _train(data, out, 50, eval_every=10)
  assert any(l.startswith(f"skipped the best checkpoint {best}") for l in log)
  kept = checkpoint_io.listed(os.path.join(out, "best"))
  assert kept and kept[-1].endswith("ckpt-50") and \
      checkpoint_io.reads(kept[-1]) is None


def test_full_disk_stops_in_one_line_and_resumes(trained_run, tmp_path):
  data, _ = trained_run
  usr = tmp_path / "usr"
  usr.mkdir()
  (usr / "__init__.py").write_text(FULL_DISK)
  out = str(tmp_path / "run")
  args = ["--problem=translate_synthetic",
          "--hparams_set=transformer_tiny",
          f"--hparams={TINY_RUN}", f"--data_dir={data}",
          f"--output_dir={out}", "--train_steps=30",
          "--save_checkpoints_steps=10", "--eval_bleu=false"]
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", FULL_AFTER="1")
  done = t2t_command("t2t_trainer", *args, f"--t2t_usr_dir={usr}", env=env)
  _one_line_error(done, f"could not save checkpoint 20 in {out}",
                  "No space left on device",
                  f"{os.path.join(out, 'ckpt-10')} is still the latest")
  assert not glob.glob(os.path.join(out, "*_temp"))
  assert checkpoint_io.listed(out)[-1].endswith("ckpt-10")
  assert not os.path.exists(os.path.join(out, LOCK_FILE))
  again = t2t_command("t2t_trainer", *args)       # room again
  assert again.returncode == 0, again.stderr[-2000:]
  assert "resumed from" in again.stdout + again.stderr
  assert checkpoint_io.listed(out)[-1].endswith("ckpt-30")


@pytest.mark.parametrize("name,damage", [
    ("hparams.json", '{"hidden_size": 64, "num_hea'),
    ("model.json", '{"model": "transformer"}'),
])
def test_damaged_run_files_are_named(run_copy, name, damage):
  data, out = run_copy
  with open(os.path.join(out, name), "w", encoding="utf-8") as f:
    f.write(damage)
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--data_dir={data}", f"--output_dir={out}",
                     f"--decode_from_file={os.path.join(out, name)}")
  _one_line_error(done, f"{os.path.join(out, name)} is damaged")


def test_trainer_names_a_damaged_model_json_and_refuses_another_model(
    run_copy):
  data, out = run_copy
  path = os.path.join(out, "model.json")
  with open(path, "w", encoding="utf-8") as f:
    f.write('{"model": "transfo')
  log = _train(data, out, 31)
  assert any(l.startswith(f"{path} is damaged: not JSON") and
             l.endswith(": written again from this command's flags")
             for l in log), log
  with open(path, encoding="utf-8") as f:
    assert json.load(f)["model"] == "transformer"
  with pytest.raises(UserError, match=r"records another model \(model "
                     r"'transformer' there, 'transformer_rotary' here\)"):
    _train(data, out, 32, model="transformer_rotary")


def test_a_resumed_run_refuses_a_vocabulary_made_again(run_copy):
  """The data dir's vocabulary regenerated (another SHA-256 than model.json
  records) under a resumed run: one line, nothing trained on ids that now
  name other pieces."""
  data, out = run_copy
  path = os.path.join(out, "model.json")
  with open(path, encoding="utf-8") as f:
    spec = json.load(f)
  spec["vocab_sha256"] = "0" * 64
  with open(path, "w", encoding="utf-8") as f:
    json.dump(spec, f)
  before = sorted(os.listdir(out))
  with pytest.raises(UserError, match=r"'s vocabulary is not the one this "
                     r"run trained with \(SHA-256 .*, 000000000000\.\.\. in "):
    _train(data, out, 31)
  assert sorted(os.listdir(out)) == before


def test_a_resumed_run_refuses_training_shards_made_again(run_copy):
  """The training shards made again (other names or sizes than model.json
  records) under a resumed run: one line, before any update."""
  shared, out = run_copy
  data = os.path.join(os.path.dirname(out), "data")
  shutil.copytree(shared, data)   # the shared data stays as it is
  _train(data, out, 31)          # records the shards' digest
  shard = sorted(glob.glob(os.path.join(data, "*-train-*-of-*")))[0]
  with open(shard, "ab") as f:
    f.write(b"\0" * 16)
  with pytest.raises(UserError, match=r"'s training shards are not the ones "
                     r"this run trained on \(their names and sizes differ"):
    _train(data, out, 32)
  assert checkpoint_io.listed(out)[-1].endswith("ckpt-31")


def test_damaged_checkpoint_state_and_best_json(run_copy):
  data, out = run_copy
  state = os.path.join(out, "checkpoint")
  with open(state, "w", encoding="utf-8") as f:
    f.write("model_checkpoint_path: \"ckpt-")
  # The decoder names the file and the newest checkpoint beside it ...
  with pytest.raises(UserError, match=f"{state} is damaged.*pass "
                     f"--checkpoint_path={os.path.join(out, 'ckpt-30')}"):
    load_model_from_dir(out)
  # ... and the trainer rebuilds it and resumes from that checkpoint.
  log = _train(data, out, 40)
  assert any(l.startswith(f"{state} was damaged; rebuilt it from the 3 ")
             for l in log), log
  assert any(l.startswith("resumed from") and "ckpt-30" in l for l in log)
  os.makedirs(os.path.join(out, "best"), exist_ok=True)
  with open(os.path.join(out, "best", "best.json"), "w",
            encoding="utf-8") as f:
    f.write('{"metric": "loss"')
  with pytest.raises(UserError, match=r"best\.json is damaged: not JSON"):
    _train(data, out, 50, eval_every=10)


def test_damaged_data_files_are_named(trained_run, tmp_path):
  data, out = trained_run
  copy = str(tmp_path / "data")
  shutil.copytree(data, copy)
  vocab = glob.glob(os.path.join(copy, "vocab.*.model"))[0]
  with open(vocab, "r+b") as f:
    f.truncate(100)
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--data_dir={copy}", f"--output_dir={out}",
                     f"--decode_from_file={vocab}")
  _one_line_error(done, f"{vocab} is damaged: not a SentencePiece model")
  shutil.rmtree(copy)
  shutil.copytree(data, copy)
  shard = sorted(glob.glob(os.path.join(copy, "*-train-*")))[3]
  _truncate_file(shard)
  # Cut inside a record's header, a shard reads as a clean end of file: the
  # sizes datagen recorded name it either way.
  with pytest.raises(UserError, match=f"{shard} is damaged: .* bytes, "
                     "datagen wrote"):
    _train(copy, str(tmp_path / "run"), 10)


def test_one_trainer_per_run_directory(trained_run, tmp_path):
  data, _ = trained_run
  out = str(tmp_path / "run")
  os.makedirs(out)
  lock = os.path.join(out, LOCK_FILE)
  # A live holder on this host (this test's own process): refused.
  with RunLock(out):
    with pytest.raises(UserError, match=f"being trained by pid {os.getpid()}"):
      _train(data, out, 10)
    assert os.path.exists(lock)
  assert not os.path.exists(lock)
  # A holder on another host: refused, never taken over.
  with open(lock, "w", encoding="utf-8") as f:
    f.write('{"pid": 1, "host": "elsewhere", "started": "2026-01-01"}')
  with pytest.raises(UserError, match="pid 1 on elsewhere"):
    _train(data, out, 10)
  # The same lock not refreshed for two hours: a lease run out, taken over.
  stale = time.time() - 7200
  os.utime(lock, (stale, stale))
  log = _train(data, out, 5)
  assert [l for l in log if l.startswith("taking over")] == [
      f"taking over {lock}: its trainer (pid 1 on elsewhere) has not "
      "refreshed it for 2:00:00 (more than 10 minutes)"], log
  assert not os.path.exists(lock)
  with open(lock, "w", encoding="utf-8") as f:
    f.write('{"pid": 1, "host": "elsewhere", "started": "2026-01-01"}')
  # A holder that is gone (a finished process): taken over with a note.
  gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                        capture_output=True, text=True, check=True)
  with open(lock, "w", encoding="utf-8") as f:
    f.write(f'{{"pid": {gone.stdout.strip()}, "host": '
            f'"{socket.gethostname()}"}}')
  log = _train(data, out, 10)
  assert any(l.startswith(f"taking over {lock}: its trainer (pid "
                          f"{gone.stdout.strip()}) is gone") for l in log), log
  assert not os.path.exists(lock)
  assert checkpoint_io.listed(out)[-1].endswith("ckpt-10")


def test_two_trainer_processes(trained_run, tmp_path):
  """A second t2t-trainer on a directory in use stops in one line."""
  data, _ = trained_run
  out = str(tmp_path / "run")
  args = ["--problem=translate_synthetic", "--hparams_set=transformer_tiny",
          f"--hparams={TINY_RUN}", f"--data_dir={data}", f"--output_dir={out}",
          "--train_steps=100000", "--eval_bleu=false"]
  first = subprocess.Popen(
      [sys.executable, "-m", "t2t_keras.bin.t2t_trainer", *args],
      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
      cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  try:
    for line in first.stdout:             # wait until it holds the lock
      if line.startswith("training "):
        break
    second = t2t_command("t2t_trainer", *args)
    _one_line_error(second, f"{out} is being trained by pid {first.pid}")
  finally:
    first.kill()
    first.wait()


@pytest.mark.parametrize("name, field, value, said", [
    ("hparams.json", "hidden_size", "64", 'hidden_size is "64", expected a '
     "number"),
    ("hparams.json", "shared_embedding", 1, "shared_embedding is 1, expected "
     "true or false"),
    ("model.json", "target_vocab_size", 600.5, "'target_vocab_size' is "
     "600.5, expected an integer"),
    ("model.json", "model", ["transformer"], "'model' is [\"transformer\"], "
     "expected a string")])
def test_run_files_with_values_of_the_wrong_type(run_copy, name, field,
                                                 value, said):
  data, out = run_copy
  path = os.path.join(out, name)
  with open(path, encoding="utf-8") as f:
    values = json.load(f)
  values[field] = value
  with open(path, "w", encoding="utf-8") as f:
    json.dump(values, f)
  target = os.path.join(out, "decoded.txt")
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--data_dir={data}", f"--output_dir={out}",
                     f"--decode_from_file={os.path.join(out, 'checkpoint')}",
                     f"--decode_to_file={target}")
  _one_line_error(done, f"{path} is damaged: {said}")
  assert not os.path.exists(target)


def test_best_mixture_and_shard_records_of_the_wrong_type(run_copy,
                                                          tmp_path):
  from t2t_keras.data import mixture
  from t2t_keras import registry
  data, out = run_copy
  best = os.path.join(out, "best")
  os.makedirs(best, exist_ok=True)
  for state, said in (
      ({"metric": "loss", "history": [[10, "2.5"]], "best": 2.5,
        "best_step": 10, "evaluations_since_best": 0},
       'history[0] figure is "2.5", expected a number'),
      ({"metric": "loss", "history": [], "best": None, "best_step": None,
        "evaluations_since_best": "0"},
       "'evaluations_since_best' is \"0\", expected an integer")):
    with open(os.path.join(best, "best.json"), "w", encoding="utf-8") as f:
      json.dump(state, f)
    with pytest.raises(UserError, match=re.escape(said)) as e:
      _train(data, out, 40, eval_every=10)
    assert "\n" not in str(e.value)
  path = str(tmp_path / "m-train-mix.json")
  for parts, said in (
      ([{"prefix": "a", "weight": "0.5", "split": "train.0"}],
       'train[0] weight is "0.5", expected a number'),
      ([{"prefix": "a", "weight": 0, "split": "train.0"}],
       "train[0] weight is 0, expected a number > 0"),
      ([{"prefix": "a", "split": "train.0"}], "train[0] has no 'weight'"),
      (["a"], 'train[0] is "a", expected an object')):
    with open(path, "w", encoding="utf-8") as f:
      json.dump({"train": parts}, f)
    with pytest.raises(UserError, match=re.escape(said)):
      mixture.read_mix(path)
  copy = str(tmp_path / "data")
  shutil.copytree(data, copy)
  problem = registry.problem("translate_synthetic")
  manifest = problem._manifest(copy)
  with open(manifest, encoding="utf-8") as f:
    record = json.load(f)
  record["sizes"][sorted(record["sizes"])[0]] = "12"
  with open(manifest, "w", encoding="utf-8") as f:
    json.dump(record, f)
  with pytest.raises(UserError, match=re.escape(
      f"{manifest} is damaged: the size of ")):
    problem._read_manifest(copy)


def test_a_latest_checkpoint_deleted_before_it_is_read_gives_way(
    run_copy, monkeypatch):
  """A trainer keeping its last few deletes the checkpoint a reader chose
  as the latest before the reader reads it: the reader uses the newest
  that reads, and says so (it failed in one line before)."""
  import tensorflow as tf
  from t2t_keras.training.average import average_checkpoints
  from t2t_keras.training import average
  _, out = run_copy
  paths = checkpoint_io.listed(out)
  chosen = paths[-1]
  # The trainer's sweep: the state file first drops it, then its files go.
  checkpoint_io.move_aside(chosen, out)
  shutil.rmtree(os.path.join(out, checkpoint_io.UNREADABLE_DIR))
  monkeypatch.setattr(tf.train, "latest_checkpoint", lambda _: chosen)
  lines = []
  _, _, _, used = load_model_from_dir(out, log=lines.append)
  assert used == paths[-2]
  assert lines == [f"{chosen} was deleted while it was read (a trainer "
                   "keeps only its last checkpoints); using "
                   f"{paths[-2]}, the newest that reads"]
  calls = []
  real = average.last_checkpoints

  def stale_then_real(model_dir, n, last_step=None):
    calls.append(n)
    return paths[-n:] if len(calls) == 1 else real(model_dir, n, last_step)
  monkeypatch.setattr(average, "last_checkpoints", stale_then_real)
  logged = []
  averaged = average_checkpoints(out, os.path.join(out, "avg"), n=2,
                                 log=logged.append)
  assert logged[0].startswith(f"{chosen} was deleted while it was read")
  assert logged[-1] == (f"averaged {os.path.basename(paths[-3])}, "
                        f"{os.path.basename(paths[-2])} into {averaged}")


def test_a_checkpoint_the_trainer_is_sweeping_counts_as_deleted(run_copy):
  """TensorFlow's CheckpointManager deletes old files between two writes of
  the state file, the first still listing them: files gone and still
  listed is watched until the state drops it; whole files are damage."""
  import threading
  _, out = run_copy
  paths = checkpoint_io.listed(out)
  assert not checkpoint_io.deleted_by_trainer(paths[-1], out, wait=0.3)
  for name in checkpoint_io.files_of(paths[0]):
    os.remove(name)
  assert not checkpoint_io.deleted_by_trainer(paths[0], out, wait=0.3)
  later = threading.Timer(0.3, checkpoint_io.move_aside, (paths[0], out))
  later.start()
  try:
    assert checkpoint_io.deleted_by_trainer(paths[0], out, wait=5.0)
  finally:
    later.join()
