"""A training process killed with SIGKILL and started again with the same
command resumes from its last checkpoint and stops at the requested step."""

import glob
import os
import re
import signal
import subprocess
import sys
import time

import tensorflow as tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 160


def command(output_dir):
  return [sys.executable, "-m", "t2t_keras.bin.t2t_trainer",
          "--problem=copy_sequence", "--hparams_set=transformer_tiny",
          "--hparams=hidden_size=32,filter_size=64,batch_size=320,"
          "max_length=16", f"--train_steps={STEPS}",
          "--save_checkpoints_steps=10", f"--output_dir={output_dir}"]


def checkpoint_steps(output_dir):
  return sorted(int(m.group(1)) for p in glob.glob(
      os.path.join(output_dir, "ckpt-*.index"))
                if (m := re.search(r"ckpt-(\d+)\.index$", p)))


def start(output_dir, log):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.Popen(command(output_dir), stdout=log,
                          stderr=subprocess.STDOUT, cwd=REPO, env=env)


def test_sigkill_then_same_command_resumes(tmp_path):
  out = str(tmp_path / "run")
  killed_at = []
  for attempt in range(2):
    with open(tmp_path / f"log{attempt}", "w", encoding="utf-8") as log:
      process = start(out, log)
      floor = (killed_at[-1] if killed_at else 0) + 20
      deadline = time.time() + 300
      while time.time() < deadline and process.poll() is None:
        # The checkpoint state file, not the newest index file: a kill
        # between writing ckpt-N and recording it leaves ckpt-N unlisted.
        latest = tf.train.latest_checkpoint(out)
        if latest and int(latest.rsplit("-", 1)[1]) >= floor:
          break
        time.sleep(0.05)
      assert process.poll() is None, "finished before it could be killed"
      os.kill(process.pid, signal.SIGKILL)
      process.wait()
      assert process.returncode == -signal.SIGKILL
      # Whatever the kill interrupted, the latest checkpoint loads.
      latest = tf.train.latest_checkpoint(out)
      reader = tf.train.load_checkpoint(latest)
      assert reader.get_variable_to_shape_map()
      killed_at.append(int(latest.rsplit("-", 1)[1]))
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  final = subprocess.run(command(out), capture_output=True, text=True,
                         cwd=REPO, env=env, timeout=600, check=False)
  assert final.returncode == 0, final.stderr[-3000:]
  resumed = re.search(r"resumed from \S+ckpt-(\d+) at step (\d+)",
                      final.stdout)
  assert resumed, final.stdout
  assert int(resumed.group(1)) == int(resumed.group(2)) >= killed_at[-1]
  assert f"step {STEPS}: dev loss" in final.stdout
  assert checkpoint_steps(out)[-1] == STEPS
  # The second run had resumed from the first kill's checkpoint too.
  assert killed_at[1] > killed_at[0] >= 20
