"""Several devices on each of several machines, on CPUs: two TF_CONFIG
workers on 127.0.0.1, each running two replicas on logical CPUs
(``--cpu_devices=2``; kernels/distribute.py's stand-in for GPUs). The code
that matters only there runs: votes averaged over a worker's replicas, the
chief's first replica handing its state over, texts gathered once per
worker, the feed's ``% local_replicas``."""

import glob
import json
import os
import re

import tensorflow as tf

from test_distributed import (CLUSTER, TWO, assert_same_end, finish,
                              start_workers)

TASKS = [("chief", 0), ("worker", 0)]


def test_validation_early_stop_and_handover(trained_run, tmp_path):
  """Validation BLEU split over 2 workers x 2 replicas, scored the same
  on both; one chief writes the run (checkpoints, best, curves), the
  worker its data position alone; early stopping decided on the chief
  stops both after the same evaluation; started again with the worker on
  another folder, the chief's first replica hands its state over and both
  end equal."""
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
  assert [os.path.basename(p) for p in tf.train.get_checkpoint_state(
      out).all_model_checkpoint_paths] == ["ckpt-2", "ckpt-4"]
  # One chief writes the run: the worker writes its data position, no
  # model checkpoint, no best copy and no TensorBoard curves.
  assert not glob.glob(os.path.join(out, "workertemp_*"))
  assert os.listdir(os.path.join(out, "train")) and not glob.glob(
      os.path.join(out, "*", "train"))
  for pipeline in ("pipeline-0-of-2", "pipeline-1-of-2"):
    assert os.path.isfile(os.path.join(out, "data", pipeline, "ckpt-4.index"))
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
