"""The speed table's training and decoding rows before and after a change, side by side
in one run: speed_table.py's worker (benchmarks/speed/t2t_keras_worker.py,
the base model with random weights, its shapes) runs from a checkout of
``--rev`` (a git worktree under /tmp) and from this tree, alternately, for
``--rounds`` rounds; the table gives each side's median sentences/s (tokens/s
for ``train``), the
median of the rounds' ratios and every ratio, with the matmul peak measured
in the same run. Run it on an otherwise idle machine.

``fit`` times the training loop t2t-trainer runs (``Trainer.fit``, hooks and
progress lines included), not one ``train_step``: this tree's worker runs it
over each side's t2t_keras (T2T_KERAS_TREE), since older workers lack it.

``--system=savedmodel`` decodes through each side's exported SavedModel
(the ``decode_ids`` signature), ``--system=jax`` with ``JaxSearch`` under
Keras's JAX backend (speed/jax_worker.py), ``--precision=xla`` with the
search compiled by XLA, and ``--sentences``/``--output_length`` set the
decoding shape (the latency rows': ``--sentences 1``); with any of them,
this tree's worker runs over each side's t2t_keras, as for ``fit``.

Usage: python benchmarks/before_after.py --rev REV [--tasks train,fit,beam,greedy]
         [--rounds 3] [--steps 5] [--system t2t_keras|savedmodel|jax]
         [--precision float32|xla] [--sentences N] [--output_length L]
         [--quick]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from t2t_keras.analysis.peak import matmul_peaks  # pylint: disable=g-import-not-at-top,wrong-import-position


def checkout(rev):
  """A worktree of ``rev`` under /tmp (made once); its path."""
  sha = subprocess.run(["git", "-C", REPO, "rev-parse", rev], check=True,
                       capture_output=True, text=True).stdout.strip()
  path = f"/tmp/t2t_keras_{sha[:10]}"
  if not os.path.isdir(path):
    subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", path,
                    sha], check=True, capture_output=True)
  return path, sha[:10]


def speed(tree, task, steps, quick, shape=(), worker="t2t_keras_worker.py",
          precision="float32"):
  """The ``worker``'s sentences/s (tokens/s for train) for ``task`` run
  from ``tree``; ``shape``: more worker flags (--system, --sentences,
  --output_length), for which this tree's worker runs (and for the JAX
  worker and XLA)."""
  worker_tree = (REPO if task == "fit" or shape or precision != "float32" or
                 worker != "t2t_keras_worker.py" else tree)
  command = [sys.executable, os.path.join(
      worker_tree, "benchmarks", "speed", worker),
             f"--task={task}", "--model=base", f"--precision={precision}",
             f"--steps={steps}", *shape] + (["--quick"] if quick else [])
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=tree,
             T2T_KERAS_TREE=tree)
  done = subprocess.run(command, capture_output=True, text=True, env=env,
                        cwd=tree, check=False)
  for line in done.stdout.splitlines():
    if line.startswith("RESULT "):
      result = json.loads(line[len("RESULT "):])
      return result["tokens_per_s" if task in ("train", "fit") else
                    "sentences_per_s"]
  raise SystemExit(f"{tree}: {task} failed: {done.stderr[-500:]}")


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--rev", required=True)
  parser.add_argument("--tasks", default="beam,greedy")
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--steps", type=int, default=5)
  parser.add_argument("--system", default="t2t_keras",
                      choices=("t2t_keras", "savedmodel", "jax"))
  parser.add_argument("--precision", default="float32",
                      choices=("float32", "xla"))
  parser.add_argument("--sentences", type=int, default=None)
  parser.add_argument("--output_length", type=int, default=None)
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args()
  shape = [f"--{k}={getattr(args, k)}" for k in ("sentences", "output_length")
           if getattr(args, k) is not None]
  if args.system == "jax" and args.precision != "float32":
    raise SystemExit("--system=jax compiles every search: no --precision")
  if args.system == "savedmodel":
    shape.append(f"--system={args.system}")
  worker = ("jax_worker.py" if args.system == "jax" else
            "t2t_keras_worker.py")
  before, sha = checkout(args.rev)
  peaks = matmul_peaks(1024 if args.quick else 4096)
  print(f"matmul peak (TensorFlow): float32 {peaks['float32'] / 1e9:,.0f}, "
        f"bfloat16 {peaks['bfloat16'] / 1e9:,.0f} GFLOP/s")
  print(f"| task | before ({sha}) | after (this tree) | after / before | "
        "rounds |")
  print("| --- | --- | --- | --- | --- |")
  for task in args.tasks.split(","):
    pairs = []
    for _ in range(args.rounds):
      pairs.append(tuple(speed(tree, task, args.steps, args.quick, shape,
                               worker, args.precision)
                         for tree in (before, REPO)))
    ratios = [after / old for old, after in pairs]
    unit = "tokens/s" if task in ("train", "fit") else "sent/s"
    what = (f"{task}-4" if task == "beam" else task) + (
        f" {args.precision} base, {args.system}") + (
            f" ({' '.join(shape)})" if shape else "")
    print(f"| {what} |",
          f"{statistics.median(p[0] for p in pairs):,.1f} {unit} |",
          f"{statistics.median(p[1] for p in pairs):,.1f} {unit} |",
          f"{statistics.median(ratios):.3f}x |",
          ", ".join(f"{r:.3f}" for r in ratios), "|")


if __name__ == "__main__":
  main()
