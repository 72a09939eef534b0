"""A training process killed with SIGKILL, twice, at whatever it was doing
(a step, a checkpoint being written), and started again with the same
command each time, resumes from its last checkpoint, stops at the requested
step, and ends with the weights of a run that was never interrupted.
Dropout is on (0.1), so this needs the dropout random state and the data
stream to continue where they were; the stream continues from the position
saved with the checkpoint, here on two replicas (one replica's exact resume:
tests/test_seams.py's EMA run and the re-reading test below)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf

from commands import python
from t2t_keras.io.outputs import alive
from t2t_keras.io.run_lock import LOCK_FILE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS, EVERY = 30, 5


def command(data, out, replicas=1):
  return [sys.executable, "-m", "t2t_keras.bin.t2t_trainer",
          *([f"--cpu_devices={replicas}"] if replicas > 1 else []),
          "--problem=translate_synthetic", "--hparams_set=transformer_tiny",
          "--hparams=hidden_size=32,filter_size=64,num_hidden_layers=1,"
          # The average, kept by each replica on its own device, resumes
          # exactly too.
          "batch_size=512,learning_rate_warmup_steps=4,ema_decay=0.99",
          f"--data_dir={data}",
          f"--output_dir={out}", f"--train_steps={STEPS}",
          f"--save_checkpoints_steps={EVERY}", "--save_checkpoints_secs=0",
          "--eval_bleu=false"]   # the weights are compared, not BLEU


def weights(out):
  reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(out)))
  return {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()
          if k.startswith(("model/", "rng/", "ema/"))}


def _kill(process, out):
  """SIGKILLs ``process``, a prefork client (tests/prefork.py) running a
  trainer on ``out``; returns once the trainer it ran is gone too (the
  server kills it when its client goes): the pid in the run's lock."""
  process.send_signal(signal.SIGKILL)
  process.wait()
  assert process.returncode == -signal.SIGKILL
  pid = json.loads((out / LOCK_FILE).read_text(encoding="utf-8"))["pid"]
  deadline = time.time() + 60
  while alive(pid):
    assert time.time() < deadline, f"the trainer (pid {pid}) outlived it"
    time.sleep(0.01)


def test_killed_twice_resumes_to_the_unbroken_run(trained_run, tmp_path):
  data, _ = trained_run
  replicas = 2
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  out = tmp_path / "resumed"
  killed_at = []
  for _ in range(2):
    process = subprocess.Popen(python(*command(data, out, replicas)[1:]),
                               cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    floor = (killed_at[-1] if killed_at else 0) + EVERY
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None:
      # The checkpoint state file, not the newest index file: a kill
      # between writing ckpt-N and recording it leaves ckpt-N unlisted.
      latest = tf.train.latest_checkpoint(str(out))
      if latest and int(latest.rsplit("-", 1)[1]) >= floor:
        break
      time.sleep(0.02)
    assert process.poll() is None, "finished before it could be killed"
    _kill(process, out)
    # Whatever the kill interrupted, the latest checkpoint loads.
    latest = tf.train.latest_checkpoint(str(out))
    assert tf.train.load_checkpoint(latest).get_variable_to_shape_map()
    killed_at.append(int(latest.rsplit("-", 1)[1]))
  assert STEPS > killed_at[1] > killed_at[0] >= EVERY
  halfway = weights(out)
  logs = []
  for run in (out, tmp_path / "unbroken"):
    done = subprocess.run(python(*command(data, run, replicas)[1:]), cwd=REPO, env=env,
                          text=True, capture_output=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    logs.append(done.stdout)
  resumed = re.search(r"resumed from \S+ckpt-(\d+) at step (\d+)", logs[0])
  assert resumed, logs[0]
  assert int(resumed.group(1)) == int(resumed.group(2)) == killed_at[1]
  assert (f"continuing the training data from its position at step "
          f"{killed_at[1]}") in logs[0], logs[0]
  assert f"step {STEPS}: dev loss" in logs[0]
  assert tf.train.latest_checkpoint(str(out)).endswith(f"ckpt-{STEPS}")
  unbroken, final = weights(tmp_path / "unbroken"), weights(out)
  assert set(unbroken) == set(final) and any(k.startswith("rng/")
                                             for k in unbroken)
  assert any(not np.array_equal(halfway[k], final[k]) for k in final)
  for key, value in unbroken.items():
    np.testing.assert_allclose(final[key], value, rtol=1e-6, atol=1e-7,
                               err_msg=key)


def test_a_checkpoint_without_a_data_position_resumes_by_re_reading(tmp_path):
  """A run directory from before data positions were kept (its data/ folder
  gone): the resumed run says so, re-reads the batches its updates used, and
  ends with the unbroken run's weights."""
  from t2t_keras.training.run import CheckpointPolicy, RunConfig, train

  def run(out, steps):
    logs = []
    train(RunConfig("copy_sequence", "transformer_tiny", str(out),
                    train_steps=steps, hparams_overrides=(
                        "hidden_size=32,filter_size=64,num_hidden_layers=1,"
                        "batch_size=320,max_length=16"),
                    checkpoints=CheckpointPolicy(every_steps=2)),
          log=logs.append)
    return logs

  run(tmp_path / "old", 4)
  assert sorted(os.listdir(tmp_path / "old" / "data" / "pipeline-0-of-1")) \
      == sorted(f"ckpt-{s}.{e}" for s in (2, 4)
                for e in ("index", "data-00000-of-00001"))
  import shutil
  shutil.rmtree(tmp_path / "old" / "data")
  logs = run(tmp_path / "old", 6)
  assert any("ckpt-4 has no saved data position" in line and
             "re-reading the 4 batch(es) its updates used" in line
             for line in logs), logs
  run(tmp_path / "unbroken", 6)
  old, unbroken = weights(tmp_path / "old"), weights(tmp_path / "unbroken")
  for key, value in unbroken.items():
    np.testing.assert_allclose(old[key], value, rtol=1e-6, atol=1e-7,
                               err_msg=key)
