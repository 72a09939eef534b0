"""What an hparams change costs in training speed, end to end: t2t-trainer
runs ``--steps`` updates with ``--a`` and with ``--b`` (hparams overrides
on ``--hparams_set``), alternately for ``--rounds`` rounds, each in a fresh
run directory and process, with no checkpoints and a one-batch dev loss
(no decoding) every ``--steps`` / 3 updates. A run's figure is the median of
its progress lines' tokens/s after the first (tracing and warm-up); the
table gives each side's median, the median of the rounds' paired ratios
and every ratio, beside the matmul peak measured in the same run. Run it on
an otherwise idle machine, after t2t-datagen made ``--data_dir``.

Usage: python benchmarks/trainer_ab.py --problem=translate_ende
         --data_dir=/tmp/t2t_data/multi30k --hparams_set=transformer_multi30k
         --a= --b=ema_decay=0.999 [--steps 150] [--rounds 2]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from t2t_keras.analysis.peak import matmul_peaks

PROGRESS = re.compile(r"^step \d+/\d+ .* ([\d,]+) tokens/s", re.M)


def tokens_per_s(args, overrides):
  """The median tokens/s of one t2t-trainer run's progress lines after the
  first."""
  every = max(1, args.steps // 3)
  with tempfile.TemporaryDirectory() as out:
    command = [sys.executable, "-m", "t2t_keras.bin.t2t_trainer",
               f"--problem={args.problem}", f"--data_dir={args.data_dir}",
               f"--hparams_set={args.hparams_set}", f"--hparams={overrides}",
               f"--output_dir={out}", f"--train_steps={args.steps}",
               f"--local_eval_frequency={every}", "--eval_steps=1",
               "--eval_bleu=false", "--save_checkpoints_secs=0"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                          check=False)
  figures = [float(v.replace(",", ""))
             for v in PROGRESS.findall(done.stdout + done.stderr)]
  if done.returncode or len(figures) < 2:
    raise SystemExit(f"t2t-trainer --hparams={overrides} failed:\n"
                     f"{(done.stdout + done.stderr)[-1500:]}")
  return statistics.median(figures[1:])


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--problem", required=True)
  parser.add_argument("--data_dir", required=True)
  parser.add_argument("--hparams_set", required=True)
  parser.add_argument("--a", default="", help="overrides of side A")
  parser.add_argument("--b", required=True, help="overrides of side B")
  parser.add_argument("--steps", type=int, default=150)
  parser.add_argument("--rounds", type=int, default=2)
  parser.add_argument("--quick", action="store_true",
                      help="a small matmul for the peak (checks the script)")
  args = parser.parse_args()
  peaks = matmul_peaks(1024 if args.quick else 4096)
  print(f"matmul peak (TensorFlow): float32 {peaks['float32'] / 1e9:,.0f}, "
        f"bfloat16 {peaks['bfloat16'] / 1e9:,.0f} GFLOP/s")
  pairs = [(tokens_per_s(args, args.a), tokens_per_s(args, args.b))
           for _ in range(args.rounds)]
  ratios = [b / a for a, b in pairs]
  print(f"| {args.hparams_set}, {args.steps} steps | A: `{args.a}` | "
        f"B: `{args.b}` | B / A | rounds |")
  print("| --- | --- | --- | --- | --- |")
  print(f"| training tokens/s | {statistics.median(p[0] for p in pairs):,.0f}"
        f" | {statistics.median(p[1] for p in pairs):,.0f} | "
        f"{statistics.median(ratios):.3f}x | "
        f"{', '.join(f'{r:.3f}' for r in ratios)} |")


if __name__ == "__main__":
  main()
