"""How long a resumed run takes to apply its first updates, by the step it
resumes at: a tiny translate_synthetic run is trained to ``--late`` steps
(checkpoints every ``--early`` steps, all kept), then t2t-trainer resumes a
copy of it at ``--early`` and at ``--late`` and applies ``--more`` updates,
from the data position saved with the checkpoint and, for comparison, by
re-reading the batches the restored updates used (the position removed, as
a run from before positions were kept). ``--train_devices`` and
``--resume_devices`` train and resume on that many replicas (logical CPUs,
``--cpu_devices``): a run of 2 replicas resumed on 1 reads the same
position. Each figure is the wall time of the whole resumed command, the
median of ``--rounds``. Run it on an otherwise idle machine.

Usage: python benchmarks/resume_speed.py [--work /tmp/resume_speed]
         [--early 30] [--late 600] [--more 5] [--rounds 2]
         [--train_devices 1] [--resume_devices 1]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from t2t_keras.analysis.peak import matmul_peaks

TINY = ("hidden_size=64,filter_size=128,num_hidden_layers=2,num_heads=4,"
        "batch_size=1024,learning_rate_warmup_steps=100")
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def devices(count):
  """The flags that train on ``count`` replicas."""
  return [f"--cpu_devices={count}"] if count > 1 else []


def trainer(data, out, steps, *extra):
  command = [sys.executable, "-m", "t2t_keras.bin.t2t_trainer",
             "--problem=translate_synthetic", "--hparams_set=transformer_tiny",
             f"--hparams={TINY}", f"--data_dir={data}", f"--output_dir={out}",
             f"--train_steps={steps}", "--eval_bleu=false", "--eval_steps=1",
             "--save_checkpoints_secs=0", *extra]
  start = time.time()
  done = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                        env=ENV, check=False)
  if done.returncode:
    raise SystemExit(f"t2t-trainer failed:\n{done.stderr[-2000:]}")
  return time.time() - start, done.stdout


def copy_at(run, step, target, keep_position):
  """A copy of ``run`` whose only checkpoint is ``ckpt-step``."""
  import tensorflow as tf
  shutil.rmtree(target, ignore_errors=True)
  shutil.copytree(run, target)
  tf.compat.v1.train.update_checkpoint_state(
      target, os.path.join(target, f"ckpt-{step}"),
      all_model_checkpoint_paths=[os.path.join(target, f"ckpt-{step}")])
  if not keep_position:
    shutil.rmtree(os.path.join(target, "data"))


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--work", default="/tmp/resume_speed")
  parser.add_argument("--early", type=int, default=30)
  parser.add_argument("--late", type=int, default=600)
  parser.add_argument("--more", type=int, default=5)
  parser.add_argument("--rounds", type=int, default=2)
  parser.add_argument("--train_devices", type=int, default=1)
  parser.add_argument("--resume_devices", type=int, default=1)
  args = parser.parse_args()
  data = os.path.join(args.work, "data")
  run = os.path.join(args.work, f"run-{args.train_devices}")
  if not os.path.isdir(data):
    subprocess.run([sys.executable, "-m", "t2t_keras.bin.t2t_datagen",
                    "--problem=translate_synthetic", f"--data_dir={data}"],
                   check=True, cwd=REPO, env=ENV, capture_output=True)
  if not os.path.isfile(os.path.join(run, f"ckpt-{args.late}.index")):
    shutil.rmtree(run, ignore_errors=True)
    keep = args.late // args.early + 1
    trainer(data, run, args.late, f"--save_checkpoints_steps={args.early}",
            f"--keep_checkpoint_max={keep}", *devices(args.train_devices))
  rows = []
  for keep_position in (True, False):
    for step in (args.early, args.late):
      times = []
      for _ in range(args.rounds):
        target = os.path.join(args.work, "resumed")
        copy_at(run, step, target, keep_position)
        seconds, log = trainer(data, target, step + args.more,
                               *devices(args.resume_devices))
        expected = ("continuing the training data from its position" if
                    keep_position else "re-reading the")
        if expected not in log:
          raise SystemExit(f"the resumed run did not say {expected!r}:\n"
                           f"{log[-2000:]}")
        times.append(seconds)
      rows.append((keep_position, step, statistics.median(times)))
  peak = matmul_peaks(2048)["float32"] / 1e9
  print(f"resumed runs, {args.more} updates each, trained on "
        f"{args.train_devices} replica(s) and resumed on "
        f"{args.resume_devices} (float32 matmul peak {peak:.0f} GFLOP/s)\n")
  print("| data stream | resumed at step | seconds (whole command) |")
  print("| --- | --- | --- |")
  for keep_position, step, seconds in rows:
    how = "saved position" if keep_position else "re-read (old checkpoint)"
    print(f"| {how} | {step:,} | {seconds:.1f} |")


if __name__ == "__main__":
  main()
