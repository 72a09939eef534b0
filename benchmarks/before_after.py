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

``--paired`` (with ``--system=savedmodel``): each side's SavedModel is
exported by that worker into a temporary folder, then both are timed here,
in one process, their requests alternating, ``--steps`` each a round; the
row says whether their output ids are equal. Separate processes differ by
up to 15% at one sentence; the paired rounds by a few percent.

Usage: python benchmarks/before_after.py --rev REV [--tasks train,fit,beam,greedy]
         [--rounds 3] [--steps 5] [--system t2t_keras|savedmodel|jax]
         [--precision float32|xla] [--sentences N] [--output_length L]
         [--paired] [--quick]
"""

import argparse
import json
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(HERE, "speed"))

import shapes
from t2t_keras.analysis.peak import matmul_peaks


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
  result = run_worker(
      tree, os.path.join(worker_tree, "benchmarks", "speed", worker),
      [f"--task={task}", "--model=base", f"--precision={precision}",
       f"--steps={steps}", *shape] + (["--quick"] if quick else []), task)
  return result["tokens_per_s" if task in ("train", "fit") else
                "sentences_per_s"]


def run_worker(tree, worker, flags, task):
  """``worker`` (a path) run with ``flags`` over ``tree``'s t2t_keras: its
  RESULT line's dict."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=tree,
             T2T_KERAS_TREE=tree)
  done = subprocess.run([sys.executable, worker] + flags, capture_output=True,
                        text=True, env=env, cwd=tree, check=False)
  for line in done.stdout.splitlines():
    if line.startswith("RESULT "):
      return json.loads(line[len("RESULT "):])
  raise SystemExit(f"{tree}: {task} failed: {done.stderr[-500:]}")


def exported(tree, task, args, shape):
  """``tree``'s SavedModel for ``task`` (this tree's worker over that
  tree's t2t_keras) in a new temporary folder: (folder, path)."""
  folder = tempfile.mkdtemp(prefix="before_after_")
  result = run_worker(
      tree, os.path.join(HERE, "speed", "t2t_keras_worker.py"),
      [f"--task={task}", "--model=base", f"--precision={args.precision}",
       f"--export_to={folder}", *shape] + (["--quick"] if args.quick else []),
      f"exporting for {task}")
  return folder, result["export"]


def paired(trees, task, args, shape):
  """--paired: both trees' SavedModels timed in this process, requests
  alternating. Returns ([(before, after) sentences/s a round], whether
  their output ids are equal)."""
  import numpy as np
  import tensorflow as tf
  made = [exported(tree, task, args, shape) for tree in trees]
  s = shapes.sizes(args.quick)
  for key in ("sentences", "output_length"):
    s[key] = getattr(args, key) or s[key]
  batch = tf.constant(shapes.random_ids(
      np.random.RandomState(1), s["sentences"], s["decode_source_length"],
      s["vocab"], eos_last=True), tf.int32)
  runs = [lambda sig=tf.saved_model.load(path).signatures["decode_ids"]:
          sig(input_ids=batch)["output_ids"].numpy() for _, path in made]
  outputs = [run() for run in runs] + [run() for run in runs]
  rounds = []
  for _ in range(args.rounds):
    times = ([], [])
    for i in range(args.steps):
      for side in ((0, 1) if i % 2 == 0 else (1, 0)):
        start = time.perf_counter()
        runs[side]()
        times[side].append(time.perf_counter() - start)
    rounds.append(tuple(s["sentences"] / statistics.median(t)
                        for t in times))
  for folder, _ in made:
    shutil.rmtree(folder, ignore_errors=True)
  return rounds, np.array_equal(outputs[0], outputs[1])


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
  parser.add_argument("--paired", action="store_true")
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args()
  if args.paired and args.system != "savedmodel":
    raise SystemExit("--paired: only with --system=savedmodel")
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
    same = None
    if args.paired:
      pairs, same = paired((before, REPO), task, args, shape)
    else:
      pairs = [tuple(speed(tree, task, args.steps, args.quick, shape,
                           worker, args.precision) for tree in (before, REPO))
               for _ in range(args.rounds)]
    ratios = [after / old for old, after in pairs]
    unit = "tokens/s" if task in ("train", "fit") else "sent/s"
    what = (f"{task}-4" if task == "beam" else task) + (
        f" {args.precision} base, {args.system}") + (
            f" ({' '.join(shape)})" if shape else "") + (
                "" if same is None else
                f", paired in one process, {'same' if same else 'other'} ids")
    print(f"| {what} |",
          f"{statistics.median(p[0] for p in pairs):,.1f} {unit} |",
          f"{statistics.median(p[1] for p in pairs):,.1f} {unit} |",
          f"{statistics.median(ratios):.3f}x |",
          ", ".join(f"{r:.3f}" for r in ratios), "|")


if __name__ == "__main__":
  main()
