"""speed_table.py's latency part: seconds per request at interactive sizes
(one sentence, a few), ours in each mode beside CTranslate2 (standard
library only).

Each cell is one worker process (t2t_keras_worker.py at that shape): the
median seconds of one ``--sentences`` batch decoded to ``--output_length``
tokens, after two untimed batches (the XLA modes compile there). The
random model rarely ends a sentence, so every system decodes to the limit.
"""

# (sentences, task, output tokens, EOS included); the quick shapes check
# the command only.
SHAPES = ((1, "greedy", 30), (1, "beam", 30), (8, "greedy", 120),
          (32, "beam", 30))
QUICK_SHAPES = ((1, "greedy", 9), (2, "beam", 9))
# (system, precision, label): the columns.
COLUMNS = (("t2t_keras", "float32", "ours graph"),
           ("t2t_keras", "bfloat16", "ours graph bfloat16"),
           ("t2t_keras", "int8", "ours graph int8"),
           ("t2t_keras", "xla", "ours XLA"),
           ("savedmodel", "float32", "ours SavedModel"),
           ("savedmodel", "bfloat16", "ours SavedModel bfloat16"),
           ("savedmodel", "xla", "ours SavedModel XLA"),
           ("jax", "float32", "ours JAX"),
           ("jax", "bfloat16", "ours JAX bfloat16"),
           ("jax", "int8", "ours JAX int8"),
           ("ctranslate2", "float32", "CTranslate2 float32"),
           ("ctranslate2", "int8", "CTranslate2 int8"))
# The SavedModel as stock TF Serving runs it (no XLA).
STOCK_SAVEDMODEL = ("float32", "bfloat16", "int8")


def shape_label(shape):
  sentences, task, length = shape
  search = "beam 4" if task == "beam" else "greedy"
  return (f"{sentences} sentence{'s' if sentences > 1 else ''}, {search}, "
          f"{length} tokens")


def measure(run_worker, columns, quick, steps, log):
  """({(shape, system, precision): seconds or None (failed)}, [error
  lines]) for ``columns`` (some of COLUMNS); each cell from
  ``run_worker(system, task, precision, sentences, output_length, steps)``,
  which returns the worker's RESULT dict or one with "error"."""
  seconds = {}
  errors = []
  for shape in QUICK_SHAPES if quick else SHAPES:
    sentences, task, length = shape
    for system, precision, _ in columns:
      result = run_worker(system, task, precision, sentences, length, steps)
      if "error" in result:
        errors.append(f"{shape_label(shape)}, {system} {precision}: "
                      f"{result['error']}")
        seconds[(shape, system, precision)] = None
      else:
        seconds[(shape, system, precision)] = result["seconds_per_batch"]
    log(f"  measured latency: {shape_label(shape)}")
  return seconds, errors


def table(seconds, columns, quick):
  """The latency table's lines: a row per shape, a column per mode of
  ``columns``, then our fastest mode against CTranslate2 float32 (where
  both were measured)."""
  lines = ["| request | " + " | ".join(c[2] for c in columns) + " |",
           "|" + " --- |" * (len(columns) + 1)]
  verdicts = []
  for shape in QUICK_SHAPES if quick else SHAPES:
    cells = [seconds.get((shape, s, p)) for s, p, _ in columns]
    lines.append(f"| {shape_label(shape)} | " + " | ".join(
        "failed" if c is None else f"{c:.3g} s" for c in cells) + " |")
    ours = {label: seconds.get((shape, s, p)) for s, p, label in columns
            if s != "ctranslate2"}
    ours = {k: v for k, v in ours.items() if v is not None}
    stock = {label: seconds.get((shape, s, p)) for s, p, label in columns
             if s == "savedmodel" and p in STOCK_SAVEDMODEL}
    stock = {k: v for k, v in stock.items() if v is not None}
    for compute in ("float32", "int8"):
      theirs = seconds.get((shape, "ctranslate2", compute))
      for kind, found in (("ours", ours), ("our stock SavedModels", stock)):
        if theirs and found:
          label = min(found, key=found.get)
          verdicts.append(
              f"{shape_label(shape)}: fastest of {kind} ({label}) "
              f"{found[label]:.3g} s = {found[label] / theirs:.2f}x "
              f"CTranslate2 {compute}'s time")
  return lines + [""] + verdicts
