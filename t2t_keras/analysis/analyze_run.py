"""What t2t-analyze runs: the paper's cost tables for an hparams set.

``analyze`` returns a plain dict (the ``--json`` output); ``format_report``
turns it into readable tables.
"""

from t2t_keras import registry
from t2t_keras.analysis import cost
from t2t_keras.analysis.layer_types import table1
from t2t_keras.errors import UserError

# The paper's setting (sections 5.1, 5.2 and Table 2's footnote).
PAPER_BATCH_TOKENS = 25000      # source tokens, and as many target tokens
PAPER_DEVICES = 8               # P100 GPUs
PAPER_DEVICE_TFLOPS = 9.5       # P100 sustained single precision
PAPER_STEPS = {"transformer_base": 100000, "transformer_big": 300000}
PAPER_TRAINING_FLOPS = {"transformer_base": 3.3e18, "transformer_big": 2.3e19}
PAPER_DAYS = {"transformer_base": 0.5, "transformer_big": 3.5}   # 12 h, 3.5 d
DEFAULT_STEPS = 100000


def analyze(hparams_set, vocab_size, hparams_overrides="", model=None,
            target_vocab_size=None, source_length=25, target_length=25,
            batch_tokens=PAPER_BATCH_TOKENS, steps=None,
            devices=PAPER_DEVICES, device_tflops=PAPER_DEVICE_TFLOPS,
            kernel_width=3, neighborhood=None):
  """The report: parameters by part, FLOPs per token, the cost of a run
  (Table 2's estimate) and Table 1's rows. Lengths are per sentence;
  ``batch_tokens`` is the source tokens per step (as many target tokens
  are assumed, in sentences of these lengths)."""
  hparams = registry.hparams(hparams_set).parse(hparams_overrides)
  model = model or "transformer"
  model_class = registry.model(model)
  if model_class not in cost.COUNTED_MODELS:
    raise UserError(
        f"t2t-analyze cannot count model {model}: it counts "
        f"{', '.join(sorted(c.registered_name for c in cost.COUNTED_MODELS))}"
        " (add the new model's parts to t2t_keras/analysis/cost.py)")
  config = model_class.config_class.from_hparams(hparams)
  vocabs = (int(vocab_size), int(target_vocab_size or vocab_size))
  steps = steps or PAPER_STEPS.get(hparams_set, DEFAULT_STEPS)
  parts = cost.parameters(config, *vocabs)
  forward = cost.forward_flops(config, vocabs, source_length, target_length)
  training = cost.training_flops(config, vocabs, source_length,
                                 target_length)
  decoding = cost.decoding_flops(config, vocabs, source_length,
                                 target_length)
  sentences = batch_tokens / source_length
  per_step = cost.step_flops(config, vocabs, source_length, target_length,
                             sentences)
  total = per_step * steps
  seconds = total / (devices * device_tflops * 1e12)
  return {
      "hparams_set": hparams_set, "model": model,
      "hparams_overrides": hparams_overrides,
      "vocab_size": vocabs[0], "target_vocab_size": vocabs[1],
      "config": config.to_dict(),
      "parameters": dict(parts, total=sum(parts.values())),
      "lengths": {"source": source_length, "target": target_length,
                  "decoded": target_length},
      "flops_per_token": {
          "forward": {"source": forward[0], "target": forward[1]},
          "training": {"source": training[0], "target": training[1]},
          "decoding": {"source": decoding[0], "target": decoding[1]}},
      "training_run": {
          "steps": steps, "source_tokens_per_step": batch_tokens,
          "target_tokens_per_step": sentences * target_length,
          "flops_per_step": per_step, "total_flops": total,
          "devices": devices, "device_tflops": device_tflops,
          "days": seconds / 86400,
          "paper_total_flops": PAPER_TRAINING_FLOPS.get(hparams_set),
          "paper_days": PAPER_DAYS.get(hparams_set)},
      "table1": [dict(zip(("layer", "orders", "complexity", "sequential",
                           "path_length"), row))
                 for row in table1(source_length, config.hidden_size,
                                   kernel_width, neighborhood)],
      "table1_sizes": {"n": source_length, "d": config.hidden_size,
                       "k": kernel_width, "r": neighborhood or kernel_width},
  }


def _table(header, rows):
  widths = [max(len(str(r[i])) for r in [header] + rows)
            for i in range(len(header))]
  lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                     for i, (c, w) in enumerate(zip(r, widths)))
           for r in [header] + rows]
  lines.insert(1, "  ".join("-" * w for w in widths))
  return "\n".join(lines)


def _e(x):
  return f"{x:.3g}" if x < 1e6 else f"{x:.3e}"


def format_report(report):
  """The report as text tables."""
  r, f, run = report, report["flops_per_token"], report["training_run"]
  vocab = (f"vocabulary {r['vocab_size']:,}" if r["vocab_size"] ==
           r["target_vocab_size"] else f"vocabularies {r['vocab_size']:,} / "
           f"{r['target_vocab_size']:,}")
  out = [f"{r['hparams_set']} ({r['model']}"
         f"{', ' + r['hparams_overrides'] if r['hparams_overrides'] else ''}"
         f"), {vocab}", "", "Parameters (Table 3)"]
  out.append(_table(["part", "parameters"],
                    [[k, f"{v:,}"] for k, v in r["parameters"].items()]))
  lengths = r["lengths"]
  out += ["", f"FLOPs per token (matrix products; source length "
          f"{lengths['source']}, target length {lengths['target']}; decoding "
          f"{lengths['decoded']} tokens, the cache growing a position a step)"]
  out.append(_table(
      ["", "forward", "training", "decoding"],
      [[side + " token"] + [_e(f[k][side]) for k in
                            ("forward", "training", "decoding")]
       for side in ("source", "target")]))
  paper = run["paper_total_flops"]
  out += ["", "Training cost (Table 2's estimate)", _table(
      ["", "value"],
      [["steps", f"{run['steps']:,}"],
       ["tokens per step (source + target)",
        f"{run['source_tokens_per_step']:,.0f} + "
        f"{run['target_tokens_per_step']:,.0f}"],
       ["FLOPs per step", _e(run["flops_per_step"])],
       ["training FLOPs", _e(run["total_flops"])],
       [f"days on {run['devices']} devices at {run['device_tflops']} "
        "TFLOPS", f"{run['days']:.2f}"],
       ["the paper's figure (time x devices x rate)",
        _e(paper) if paper else "-"],
       ["the paper's training time (days)",
        f"{run['paper_days']:.2f}" if run["paper_days"] else "-"],
       ["model FLOPs / the paper's figure",
        f"{run['total_flops'] / paper:.0%}" if paper else "-"]])]
  sizes = r["table1_sizes"]
  out += ["", f"Table 1 (n={sizes['n']}, d={sizes['d']}, k={sizes['k']}, "
          f"r={sizes['r']})", _table(
              ["layer type", "orders", "complexity per layer",
               "sequential ops", "max path length"],
              [[t["layer"], t["orders"], f"{t['complexity']:,}",
                t["sequential"], t["path_length"]] for t in r["table1"]])]
  return "\n".join(out)
