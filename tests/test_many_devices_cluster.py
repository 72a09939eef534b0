"""Several devices on each of several machines, on CPUs: two TF_CONFIG
workers on 127.0.0.1, each running two replicas on logical CPUs
(``--cpu_devices=2``; kernels/distribute.py's stand-in for GPUs). The code
that matters only there runs: votes averaged over a worker's replicas, the
chief's first replica handing its state over, texts gathered once per
worker, the feed's ``% local_replicas``."""

import json
import os
import re
import signal
import time

import tensorflow as tf

from test_distributed import CLUSTER, assert_same_end, finish, start_workers

TASKS = [("chief", 0), ("worker", 0)]
TWO = "--cpu_devices=2"


def test_validation_early_stop_and_handover(trained_run, tmp_path):
  """Validation BLEU split over 2 workers x 2 replicas, scored the same
  on both; early stopping decided on the chief stops both after the same
  evaluation; started again with the worker on another folder, the
  chief's first replica hands its state over and both end equal."""
  out = str(tmp_path / "run")
  data = f"--data_dir={trained_run[0]}"
  frozen = f"--hparams={CLUSTER},learning_rate=0.0"
  outputs = finish(start_workers(
      out, TASKS, 8, TWO, "--save_checkpoints_steps=2",
      "--local_eval_frequency=2", "--eval_bleu", "--eval_bleu_lines=25",
      "--problem=translate_synthetic", data, frozen, "--train_minutes=60",
      own={0: ["--early_stopping_patience=1"]}))
  scores = set()
  for code, stdout, stderr in outputs:
    assert code == 0, stderr[-3000:]
    assert "4 replica(s)" in stdout and \
        "2 x CPU on each of 2 workers" in stdout, stdout[-2000:]
    assert "25 dev sentence(s) decoded over 2 workers x 2 replicas" in \
        stdout, stdout[-2000:]
    scores.add(re.search(r"^step 4: dev loss .* BLEU ([\d.]+) \(25 sen",
                         stdout, re.M).group(1))
    stopped = [l for l in stdout.splitlines() if l.startswith("stopping")]
    assert len(stopped) == 1 and "at step 2 (" in stopped[0], stdout[-2000:]
  assert len(scores) == 1, scores
  assert json.load(open(os.path.join(out, "best", "best.json"),
                        encoding="utf-8"))["best_step"] == 2
  assert tf.train.latest_checkpoint(out).endswith("ckpt-4")
  assert_same_end(outputs, 4)

  # Started again with other hparams: the chief refuses its folder after
  # joining the cluster, so the worker stops too, not waits for it.
  elsewhere = str(tmp_path / "elsewhere")
  outputs = finish(start_workers(
      [out, elsewhere], TASKS, 6, TWO, "--problem=translate_synthetic",
      data, "--noeval_bleu", f"--hparams={CLUSTER}"), timeout=120)
  assert [code for code, _, _ in outputs] == [2, 2], outputs
  assert "was written with other hparams (learning_rate differ)" in \
      outputs[0][2] and "stopped answering before training began" in \
      outputs[1][2], outputs
  outputs = finish(start_workers(
      [out, elsewhere], TASKS, 6, TWO, "--problem=translate_synthetic",
      data, "--noeval_bleu", frozen))
  for code, stdout, stderr in outputs:
    assert code == 0, stderr[-3000:]
    assert "worker 1 of the 2 did not restore the chief's state (step 4" \
        in stdout, stdout[-2000:]
  assert_same_end(outputs, 6)


def test_a_signal_and_a_nan_stop_both(tmp_path):
  """SIGTERM to the worker, four micro-batches an update: both stop at
  the same update, saved, the time said; a non-finite loss ends both at
  the same step."""
  out = str(tmp_path / "run")
  accumulated = f"--hparams={CLUSTER},gradient_accumulation_steps=4"
  processes = start_workers(out, TASKS, 100000, TWO, accumulated,
                            "--save_checkpoints_secs=2",
                            "--save_checkpoints_steps=100000",
                            "--train_minutes=600")
  deadline = time.time() + 300
  while time.time() < deadline and not tf.train.latest_checkpoint(out):
    assert processes[0].poll() is None, processes[0].communicate()[1][-3000:]
    time.sleep(0.1)
  processes[1].send_signal(signal.SIGTERM)
  outputs = finish(processes, timeout=300)
  step = int(tf.train.latest_checkpoint(out).rsplit("-", 1)[1])
  for code, _, stderr in outputs:
    lines = stderr.strip().splitlines()
    assert code == 128 + signal.SIGTERM and len(lines) == 1, stderr[-3000:]
    assert f"at step {step}" in lines[0], lines
  took = re.search(r" s after the signal, which came during update "
                   r"([\d,]+);", outputs[1][2])
  assert took and step <= int(took.group(1).replace(",", "")) + 1, \
      outputs[1][2]

  outputs = finish(start_workers(
      str(tmp_path / "nan"), TASKS, 50, TWO, "--save_checkpoints_steps=1",
      f"--hparams={CLUSTER},learning_rate_schedule=constant,"
      "learning_rate=1e30"))
  steps = set()
  for code, _, stderr in outputs:
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1 and \
        "the training loss became" in lines[0], stderr[-3000:]
    steps.add(lines[0].split(" at step ")[1].split(";")[0])
  assert len(steps) == 1, steps
