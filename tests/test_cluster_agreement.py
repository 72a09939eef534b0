"""Workers of one run train what the chief trains: a worker started with
other hparams, or on a data dir holding another vocabulary of the same
size, stops every worker before the first update with one line naming the
setting and the worker (``training/agreement.py``), exit 2, nothing
written. Two TF_CONFIG processes on 127.0.0.1, as test_distributed.py."""

import os
import subprocess

import tensorflow as tf

from commands import python
from test_distributed import CLUSTER, finish, start_workers
from t2t_keras.training.agreement import check_agreement, settings

TASKS = [("chief", 0), ("worker", 0)]


def _one_line_each(outputs, said):
  for code, _, stderr in outputs:
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: " + said), lines


def test_a_worker_with_other_hparams_stops_both_before_training(tmp_path):
  out = str(tmp_path / "run")
  outputs = finish(start_workers(out, TASKS, 6, own={1: [
      f"--hparams={CLUSTER},learning_rate=5.0,label_smoothing=0.0"]}))
  _one_line_each(outputs, "worker 1's hparams label_smoothing is 0.0, the "
                 "chief's 0.1 (and 1 more: hparams learning_rate)")
  assert tf.train.latest_checkpoint(out) is None
  assert not os.path.exists(os.path.join(out, "hparams.json"))


def _local_data(shared_data, tmp_path, name, skip):
  """translate_local data from 1,200 Multi30k pairs less the first
  ``skip``: a 600-piece vocabulary either way, another one."""
  raw = tmp_path / f"raw_{name}"
  raw.mkdir()
  for split, source in (("train", "train"), ("dev", "val")):
    for lang in ("en", "de"):
      with open(os.path.join(shared_data, "multi30k", f"{source}.{lang}"),
                encoding="utf-8") as f:
        lines = f.read().split("\n")[skip if split == "train" else 0:1200]
      (raw / f"{split}.{lang}").write_text("\n".join(lines[:1000]) + "\n",
                                           encoding="utf-8")
  data = str(tmp_path / name)
  done = subprocess.run(python(
      "-m", "t2t_keras.bin.t2t_datagen", "--problem=translate_local",
      "--source_lang=en", "--target_lang=de", "--vocab_size=600",
      f"--raw_data_dir={raw}", f"--data_dir={data}"), capture_output=True,
      text=True, check=False)
  assert done.returncode == 0, done.stderr
  return data


def test_a_worker_with_another_vocabulary_stops_both(shared_data, tmp_path):
  ours, other = (_local_data(shared_data, tmp_path, "ours", 0),
                 _local_data(shared_data, tmp_path, "other", 200))
  out = str(tmp_path / "run")
  outputs = finish(start_workers(
      out, TASKS, 6, "--problem=translate_local", f"--data_dir={ours}",
      "--noeval_bleu", own={1: [f"--data_dir={other}"]}))
  _one_line_each(outputs, "worker 1's vocabulary (SHA-256) is ")
  assert tf.train.latest_checkpoint(out) is None


def test_agreeing_workers_pass_and_settings_name_what_counts():
  class Config:
    train_steps, eval_every, eval_steps, train_minutes = 100, 10, 2, None
    jit_compile, eval_bleu, checkpoints = False, True, None

  class Hparams:
    def values(self):
      return {"learning_rate": 0.2, "batch_size": 4096}
  mine = settings(Hparams(), {"vocab_sha256": "ab", "model": "transformer"},
                  Config())
  assert mine["--train_steps"] == 100 and mine["hparams batch_size"] == 4096
  assert check_agreement([mine, dict(mine), dict(mine)]) is None
  other = dict(mine, **{"--train_steps": 200})
  assert "worker 2's --train_steps is 200, the chief's 100" in str(
      check_agreement([mine, mine, other]))
