"""The shapes every system of speed_table.py runs at (standard library only:
each peer imports this from its own environment).

Training: ``batch`` sentences of ``source_length`` + ``target_length``
random tokens over a shared ``vocab``; the paper's base and big sizes (section
3, Table 3), post-norm, dropout as the paper (0.1 base, 0.3 big), label
smoothing 0.1, Adam. Decoding: ``sentences`` random sources of
``source_length`` tokens (the last is EOS) and at most ``output_length``
output tokens (EOS included), beam 4 with alpha 0.6, or greedy.
"""

import argparse
import json
import resource
import statistics
import time

MODELS = {
    "base": dict(layers=6, d_model=512, d_ff=2048, heads=8, dropout=0.1),
    "big": dict(layers=6, d_model=1024, d_ff=4096, heads=16, dropout=0.3),
    # A toy size for the test of the command itself.
    "toy": dict(layers=1, d_model=32, d_ff=64, heads=2, dropout=0.1),
}
FULL = dict(vocab=32000, batch=128, source_length=32, target_length=32,
            sentences=32, decode_source_length=20, output_length=30)
QUICK = dict(vocab=300, batch=4, source_length=8, target_length=8,
             sentences=4, decode_source_length=6, output_length=9)
LABEL_SMOOTHING = 0.1
BEAM, ALPHA = 4, 0.6
EOS = 1


def overrides(model):
  """t2t_keras hparams overrides (on transformer_base) for ``MODELS[model]``."""
  m = MODELS[model]
  return (f"num_hidden_layers={m['layers']},hidden_size={m['d_model']},"
          f"filter_size={m['d_ff']},num_heads={m['heads']},"
          f"layer_prepostprocess_dropout={m['dropout']},"
          f"label_smoothing={LABEL_SMOOTHING}")


def worker_args(description, tasks, precisions, systems=None):
  """A worker's flags: --task, --model, --precision, --steps, --quick,
  --sentences and --output_length (decoding shapes other than ``sizes``';
  the latency rows) (and --system when one worker serves several). --task takes one task or
  several joined by commas (``beam,greedy``: one process, one model build
  per task, a RESULT line each). Returns (args, sizes); ``args.tasks`` is
  the list."""
  parser = argparse.ArgumentParser(description=description)
  parser.add_argument("--task", required=True,
                      help="one of %s, or several joined by commas"
                      % "|".join(tasks))
  parser.add_argument("--model", default="base", choices=tuple(MODELS))
  parser.add_argument("--precision", default="float32", choices=precisions)
  if systems:
    parser.add_argument("--system", default=systems[0], choices=systems)
  parser.add_argument("--steps", type=int, default=10)
  parser.add_argument("--quick", action="store_true")
  parser.add_argument("--sentences", type=int, default=None,
                      help="decoding: sentences a batch (default: sizes')")
  parser.add_argument("--output_length", type=int, default=None,
                      help="decoding: the output limit, EOS included")
  if systems and "savedmodel" in systems:
    parser.add_argument("--export_to", default=None,
                        help="--system=savedmodel: export into this folder "
                        "(a version a task) and time nothing")
  args = parser.parse_args()
  args.tasks = args.task.split(",")
  unknown = [t for t in args.tasks if t not in tasks]
  if unknown:
    parser.error(f"--task={args.task}: unknown task(s) {', '.join(unknown)}; "
                 f"expected {', '.join(tasks)}")
  s = sizes(args.quick)
  for key in ("sentences", "output_length"):
    if getattr(args, key) is not None:
      s[key] = getattr(args, key)
  return args, s


def for_each_task(args, run):
  """Calls ``run(args)`` once per task of --task, ``args.task`` set to it;
  each call ends with one ``emit``."""
  for task in args.tasks:
    args.task = task
    run(args)


def sizes(quick):
  return dict(QUICK if quick else FULL)


def timed_steps(run, steps, warmup=2):
  """Median seconds of ``run()`` over ``steps`` calls after ``warmup``."""
  for _ in range(warmup):
    run()
  times = []
  for _ in range(steps):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def emit(**result):
  """A task's result line (JSON), with the process's peak resident memory
  so far."""
  result["peak_rss_gb"] = (
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
  print("RESULT " + json.dumps(result), flush=True)


def random_ids(rng, rows, length, vocab, eos_last=False):
  """int [rows, length] in [2, vocab), ending with EOS when asked (numpy)."""
  ids = rng.randint(2, vocab, size=(rows, length))
  if eos_last:
    ids[:, -1] = EOS
  return ids
