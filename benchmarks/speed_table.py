"""One table, one run: training and decoding speed of t2t_keras beside TF
Model Garden's Transformer, PyTorch's nn.Transformer and CTranslate2 at the
same shapes (benchmarks/speed/shapes.py), with the matmul peak measured in
the same run, model FLOP utilization and peak resident memory.

Each configuration's training runs in its own process (its peak memory is
its own), and its beam and greedy decoding in one more (a model built for
each), one after the other: run it on an otherwise idle machine. The peers
run in their own environments, made by ``bash benchmarks/make_peer_envs.sh``; a
missing one is reported, not fatal. CTranslate2 is the package's [ct2]
extra and decodes our random model, exported with t2t-exporter's code.

With ``--rounds N`` the measurements the targets compare (training of ours
and Model Garden at both precisions, beam-4 of ours, its SavedModel and
CTranslate2 float32) are repeated N times, each pair back to back: a cell
is the median over rounds and a ratio the median of the rounds' ratios,
printed with all of them (this machine drifts by several percent within
minutes, so one round's ratio is one draw).

The latency part (``--parts latency``; benchmarks/speed/latency.py) times
one request at interactive sizes (1 sentence greedy and beam 4, 8 sentences
greedy to 120 tokens, 32 sentences beam 4), base model: ours as a graph,
bfloat16, XLA, the SavedModel, the SavedModel with XLA and under Keras's
JAX backend (``JaxSearch``: speed/jax_worker.py, the CPU ``jax`` wheel of
the test extra), beside
CTranslate2 float32 and int8, in seconds per request, a worker process per
cell (``--latency_steps`` timed requests, the median).

Usage: python benchmarks/speed_table.py [--models base,big] [--steps 10]
         [--big_steps 3] [--rounds 1] [--envs ~/.cache/t2t_keras]
         [--systems ...] [--precisions float32,bfloat16,xla,int8]
         [--parts throughput,latency] [--latency_steps 5] [--quick]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "speed"))

import latency
import shapes
from t2t_keras.analysis.peak import matmul_peaks

SYSTEMS = ("t2t_keras", "savedmodel", "jax", "garden", "torch",
           "ctranslate2")
LABELS = {"t2t_keras": "t2t_keras", "savedmodel": "t2t_keras SavedModel",
          "jax": "t2t_keras on JAX",
          "garden": "TF Model Garden",
          "torch": "PyTorch nn.Transformer", "ctranslate2": "CTranslate2"}
ENVS = {"garden": "bench-garden", "torch": "bench-torch"}
WORKERS = {"t2t_keras": "t2t_keras_worker.py", "savedmodel":
           "t2t_keras_worker.py", "ctranslate2": "t2t_keras_worker.py",
           "jax": "jax_worker.py",
           "garden": "garden_worker.py", "torch": "torch_worker.py"}
# (system, precision) rows; what each trains and decodes.
ROWS = (("t2t_keras", "float32"), ("t2t_keras", "bfloat16"),
        ("t2t_keras", "xla"), ("savedmodel", "float32"), ("garden", "float32"),
        ("garden", "bfloat16"), ("garden", "xla"), ("torch", "float32"), ("torch", "bfloat16"),
        ("ctranslate2", "float32"), ("ctranslate2", "int8"))
PRECISIONS = tuple(dict.fromkeys(p for _, p in ROWS))   # in ROWS' order
TRAINS = {"t2t_keras", "garden", "torch"}
DECODES = {("t2t_keras", "float32"), ("t2t_keras", "bfloat16"),
           ("savedmodel", "float32"),
           ("garden", "float32"), ("garden", "bfloat16"),
           ("ctranslate2", "float32"), ("ctranslate2", "int8")}
# What the targets compare, in the order later rounds run them (each pair
# back to back): (system, precision, task); "train" is per model.
REPEATED = (("t2t_keras", "float32", "train"), ("garden", "float32", "train"),
            ("t2t_keras", "bfloat16", "train"), ("garden", "bfloat16", "train"),
            ("t2t_keras", "float32", "beam"), ("savedmodel", "float32", "beam"),
            ("ctranslate2", "float32", "beam"))


def python_of(system, envs):
  if system not in ENVS:
    return sys.executable
  path = os.path.join(envs, ENVS[system], "bin", "python")
  return path if os.path.isfile(path) else None


def run_worker(python, system, task, model, precision, steps, quick,
               extra=()):
  """{task: the worker's RESULT dict, or {"error": its last line}} for each
  task of ``task`` (one, or several joined by commas, run in one process);
  ``extra``: more worker flags."""
  command = [python, os.path.join(HERE, "speed", WORKERS[system]),
             f"--task={task}", f"--model={model}",
             f"--precision={precision}", f"--steps={steps}", *extra]
  if system in ("savedmodel", "ctranslate2"):
    command.append(f"--system={system}")
  if quick:
    command.append("--quick")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  if system == "jax":   # read as Keras starts, before the worker's code
    env["KERAS_BACKEND"] = "jax"
  result = subprocess.run(command, capture_output=True, text=True, env=env,
                          check=False)
  results = [json.loads(line[len("RESULT "):])
             for line in result.stdout.splitlines()
             if line.startswith("RESULT ")]
  lines = (result.stderr or result.stdout).strip().splitlines()
  error = {"error": lines[-1][:120] if lines else f"exit {result.returncode}"}
  tasks = task.split(",")
  return {t: results[i] if i < len(results) else error
          for i, t in enumerate(tasks)}


def model_flops(model, s):
  """Training FLOPs of one step (matrix products, t2t_keras.analysis.cost)."""
  from t2t_keras import registry
  from t2t_keras.analysis import cost
  from t2t_keras.models.config import TransformerConfig
  hparams = registry.hparams("transformer_base")
  hparams.parse(shapes.overrides(model))
  return cost.step_flops(TransformerConfig.from_hparams(hparams),
                         (s["vocab"], s["vocab"]), s["source_length"],
                         s["target_length"], s["batch"])


def speed_of(result):
  """A worker result's speed (tokens/s or sentences/s), or None."""
  if not result or "error" in result:
    return None
  return result.get("tokens_per_s", result.get("sentences_per_s"))


def median_result(rounds):
  """The result of median speed among one measurement's rounds (a failed
  round fails the measurement; with an even count, the lower middle)."""
  failed = [r for r in rounds if speed_of(r) is None]
  if failed:
    return failed[0]
  ranked = sorted(rounds, key=speed_of)
  return ranked[(len(ranked) - 1) // 2]


def ratio_text(ours, theirs):
  """``ours`` / ``theirs`` (lists of per-round results, paired by round):
  the median of the per-round ratios, with all of them when more than one;
  None where a round is missing or failed."""
  pairs = [(speed_of(a), speed_of(b)) for a, b in zip(ours, theirs)]
  if not pairs or any(a is None or not b for a, b in pairs):
    return None
  values = sorted(a / b for a, b in pairs)
  text = f"{statistics.median(values):.2f}x"
  if len(values) > 1:
    text += (f" (median of {len(values)} rounds: "
             + ", ".join(f"{v:.2f}x" for v in values) + ")")
  return text


def cell(result, key, fmt="{:,.0f}"):
  if result is None:
    return "-"
  if "error" in result:
    return "failed"
  return fmt.format(result[key])


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--models", default="base,big")
  parser.add_argument("--systems", default=",".join(SYSTEMS))
  parser.add_argument("--steps", type=int, default=10,
                      help="timed training steps or decoding batches (median)")
  parser.add_argument("--big_steps", type=int, default=3,
                      help="timed steps for the big model (about 3x slower)")
  parser.add_argument("--rounds", type=int, default=1,
                      help="repeat what the targets compare this many times")
  parser.add_argument("--envs", default=os.environ.get(
      "T2T_KERAS_CACHE", os.path.expanduser("~/.cache/t2t_keras")))
  parser.add_argument("--precisions", default=",".join(PRECISIONS),
                      help="the rows' precisions to run (e.g. float32)")
  parser.add_argument("--parts", default="throughput,latency",
                      help="throughput (the training and 32-sentence "
                      "decoding table), latency (seconds per request), "
                      "or both")
  parser.add_argument("--latency_steps", type=int, default=5,
                      help="timed requests per latency cell (median)")
  parser.add_argument("--quick", action="store_true",
                      help="toy sizes: checks the command, measures nothing")
  args = parser.parse_args()
  parts = args.parts.split(",")
  if not parts or set(parts) - {"throughput", "latency"}:
    parser.error(f"--parts={args.parts}: expected throughput, latency or "
                 "both, joined by a comma")
  s = shapes.sizes(args.quick)
  models = ["toy"] if args.quick else args.models.split(",")
  systems = args.systems.split(",")
  precisions = args.precisions.split(",")
  unknown = sorted(set(precisions) - set(PRECISIONS))
  if unknown:
    parser.error(f"--precisions: unknown {', '.join(unknown)}; expected "
                 f"some of {', '.join(PRECISIONS)}")
  peak_size = 256 if args.quick else 4096
  peaks = matmul_peaks(peak_size)
  rounds_note = (f"what the targets compare: median of {args.rounds} "
                 f"rounds; " if args.rounds > 1 else "")
  cpu = "unknown CPU"
  if os.path.exists("/proc/cpuinfo"):
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
    cpu = names[0] if names else cpu
  shapes_note = (
      f"training: {s['batch']} sentences x "
      f"({s['source_length']} + {s['target_length']}) tokens a step, "
      f"shared vocabulary {s['vocab']:,}, median of {args.steps} steps "
      f"({args.big_steps} for big); decoding: {s['sentences']} sentences "
      f"of {s['decode_source_length']} tokens, at most "
      f"{s['output_length']} output tokens, beam 4 (alpha 0.6) or greedy; "
      if "throughput" in parts else
      f"decoding sources of {s['decode_source_length']} tokens, shared "
      f"vocabulary {s['vocab']:,}; ")
  print(f"{cpu}, {os.cpu_count()} CPUs; {shapes_note}"
        f"{rounds_note}matmul peak ({peak_size}^3, TensorFlow): float32 "
        f"{peaks['float32'] / 1e9:,.0f}, bfloat16 "
        f"{peaks['bfloat16'] / 1e9:,.0f} GFLOP/s", flush=True)
  failed = 0
  if "throughput" in parts:
    failed += throughput(args, s, models, systems, precisions, peaks)
  if "latency" in parts:
    failed += latency_part(args, systems, precisions)
  return 1 if failed else 0


def latency_part(args, systems, precisions):
  """Prints the latency table (base model, or toy with --quick) of the
  columns among ``systems`` and ``precisions``; returns the count of
  failed cells."""
  model = "toy" if args.quick else "base"
  columns = [c for c in latency.COLUMNS
             if c[0] in systems and c[1] in precisions]

  def worker(system, task, precision, sentences, length, steps):
    return run_worker(python_of(system, args.envs), system, task, model,
                      precision, steps, args.quick,
                      extra=(f"--sentences={sentences}",
                             f"--output_length={length}"))[task]

  seconds, errors = latency.measure(
      worker, columns, args.quick, args.latency_steps,
      lambda line: print(line, file=sys.stderr, flush=True))
  print()
  print(f"Latency, {model} model: seconds per request (median of "
        f"{args.latency_steps}), decoding to the limit")
  for line in latency.table(seconds, columns, args.quick):
    print(line)
  for error in errors:
    print(f"failed: {error}")
  return len(errors)


def throughput(args, s, models, systems, precisions, peaks):
  """The training and 32-sentence decoding table and the targets' ratios;
  returns the count of failed measurements."""
  # (system, precision) -> {key: [result per round]}; key is ("train",
  # model), "beam" or "greedy".
  measured = {}

  def measure(system, precision, *keys):
    """Runs the keys' tasks in one worker, one after the other: ("train",
    model) and the decoding tasks "beam" and "greedy"."""
    python = python_of(system, args.envs)
    task = ",".join(k[0] if isinstance(k, tuple) else k for k in keys)
    model = next((k[1] for k in keys if isinstance(k, tuple)), models[0])
    steps = args.big_steps if model == "big" else args.steps
    results = run_worker(python, system, task, model, precision, steps,
                         args.quick)
    for key in keys:
      measured[(system, precision)].setdefault(key, []).append(
          results[key[0] if isinstance(key, tuple) else key])

  for system, precision in ROWS:
    if system not in systems or precision not in precisions:
      continue
    if python_of(system, args.envs) is None:
      measured[(system, precision)] = {"missing": True}
      continue
    measured[(system, precision)] = {}
    trains = [("train", m) for m in models] if system in TRAINS else []
    decodes = ["beam", "greedy"] if (system, precision) in DECODES else []
    if args.quick:
      # Toy sizes measure nothing: one worker a row saves TensorFlow's
      # start-up (the test's time).
      measure(system, precision, *trains, *decodes)
    else:
      # Each model's training in a worker of its own (peak memory is the
      # process's), then the decoding tasks in one more.
      for key in trains:
        measure(system, precision, key)
      if decodes:
        measure(system, precision, *decodes)
    print(f"  measured {system} {precision}", file=sys.stderr, flush=True)
  for round_index in range(1, args.rounds):
    for system, precision, task in REPEATED:
      if "missing" in measured.get((system, precision), {"missing": True}):
        continue
      for key in [("train", m) for m in models] if task == "train" else [task]:
        measure(system, precision, key)
    print(f"  round {round_index + 1} measured", file=sys.stderr, flush=True)
  results = {row: (kinds if "missing" in kinds else
                   {key: median_result(rounds) for key, rounds in kinds.items()})
             for row, kinds in measured.items()}
  flops = {model: model_flops(model, s) for model in models}
  header = ["system", "precision"]
  for model in models:
    header += [f"train {model} tok/s", f"{model} MFU"]
  header += [f"peak RSS train {models[0]} GB", "beam-4 sent/s",
             "greedy sent/s"]
  print("| " + " | ".join(header) + " |")
  print("|" + " --- |" * len(header))
  for (system, precision), row in results.items():
    cells = [LABELS[system], precision]
    if row.get("missing"):
      cells += ["not installed: bash benchmarks/make_peer_envs.sh"]
      cells += [""] * (len(header) - 3)
      print("| " + " | ".join(cells) + " |")
      continue
    for model in models:
      train = row.get(("train", model))
      cells.append(cell(train, "tokens_per_s"))
      peak = peaks["bfloat16" if precision == "bfloat16" else "float32"]
      cells.append("-" if not train or "error" in train else
                   f"{flops[model] / train['seconds_per_step'] / peak:.0%}")
    cells.append(cell(row.get(("train", models[0])), "peak_rss_gb",
                      "{:.1f}"))
    cells.append(cell(row.get("beam"), "sentences_per_s", "{:.1f}"))
    cells.append(cell(row.get("greedy"), "sentences_per_s", "{:.1f}"))
    print("| " + " | ".join(cells) + " |", flush=True)
  ratios(measured, models)
  failures = [(k, v) for k, row in results.items() for v in row.values()
              if isinstance(v, dict) and "error" in v]
  for (system, precision), result in failures:
    print(f"failed: {system} {precision}: {result['error']}")
  return len(failures)


def ratios(measured, models):
  """Ours against the peers, as the targets are stated (round by round)."""
  def rounds(system, precision, key):
    return measured.get((system, precision), {}).get(key) or []
  for model in models:
    for precision in ("float32", "bfloat16"):
      text = ratio_text(rounds("t2t_keras", precision, ("train", model)),
                        rounds("garden", precision, ("train", model)))
      if text:
        print(f"training {model} {precision}: t2t_keras / Model Garden = "
              f"{text}")
  theirs = rounds("ctranslate2", "float32", "beam")
  for system, label in (("t2t_keras", "t2t_keras"),
                        ("savedmodel", "t2t_keras SavedModel")):
    text = ratio_text(rounds(system, "float32", "beam"), theirs)
    if text:
      print(f"beam-4 float32: {label} / CTranslate2 = {text}")


if __name__ == "__main__":
  sys.exit(main())
