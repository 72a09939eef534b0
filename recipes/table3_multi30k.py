"""A small Table 3 on Multi30k EN->DE: the paper's variations (A)-(E) and the
relative-position model around the paper's model at the CPU hour's size
(transformer_multi30k with MULTI30K_TABLE3_BASE), each trained for the
same number of steps on 2 CPU cores, then one table in the paper's layout
(dev perplexity per subword and dev BLEU on val, beam 4, no averaging, as
Table 3). Rows already trained are skipped, so it can run in pieces: run it
again and it goes on where it stopped.

  python recipes/table3_multi30k.py [--multi30k_dir=../shared/data/multi30k]
      [--data_dir=/tmp/t2t_data/multi30k] [--runs_dir=/tmp/t2t_train/table3]
      [--steps=600] [--rows=base,a_h1,...]

Prints the table and writes it to RUNS_DIR/table3.md.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from t2t_keras.hparams_sets.transformer import MULTI30K_TABLE3, MULTI30K_TABLE3_BASE

# (row, model, hparams set, overrides); the relative row last.
ROWS = tuple((row, "transformer", "transformer_multi30k",
              dict(MULTI30K_TABLE3_BASE, **overrides))
             for row, overrides in MULTI30K_TABLE3) + (
                 ("relative", "transformer_relative",
                  "transformer_relative_multi30k", {}),)
RESULT = "row.json"
_EVAL = re.compile(r"step (\d+): dev loss \S+\s+perplexity (\S+).*?"
                   r"BLEU (\S+)")
_PARAMS = re.compile(r"([\d,]+) parameters")
COLUMNS = ("row", "N", "d_model", "d_ff", "h", "d_k", "d_v", "P_drop",
           "eps_ls", "pos", "steps", "dev PPL", "dev BLEU", "params (M)",
           "minutes")


def overrides_string(overrides, warmup):
  """{name: value} -> the --hparams string, the row's warm-up first."""
  items = dict(learning_rate_warmup_steps=warmup, **overrides)
  return ",".join(f"{k}={v}" for k, v in items.items())


def run(command, log_path=None):
  """Runs a t2t command, its output to the console or a log file; exits
  with the command's status if it fails."""
  print("$ " + " ".join(command), flush=True)
  if log_path is None:
    done = subprocess.run(command, check=False)
  else:
    with open(log_path, "w", encoding="utf-8") as log:
      done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT,
                            check=False)
  if done.returncode:
    where = f" (its output: {log_path})" if log_path else ""
    sys.exit(f"{command[0]} exited with status {done.returncode}{where}")


def result_of(run_dir, log_path, minutes):
  """The row's figures from its run directory's hparams.json and the
  trainer's output: its last dev evaluation and its parameter count."""
  with open(os.path.join(run_dir, "hparams.json"), encoding="utf-8") as f:
    h = json.load(f)
  with open(log_path, encoding="utf-8") as f:
    text = f.read()
  evaluations = _EVAL.findall(text)
  params = _PARAMS.search(text)
  if not evaluations or not params:
    sys.exit(f"{log_path} has no dev evaluation with BLEU or no parameter "
             "count: did the trainer finish?")
  step, ppl, bleu = evaluations[-1]
  heads = h["num_heads"]
  return {
      "N": h["num_hidden_layers"], "d_model": h["hidden_size"],
      "d_ff": h["filter_size"], "h": heads,
      "d_k": h["attention_key_size"] or h["hidden_size"] // heads,
      "d_v": h["attention_value_size"] or h["hidden_size"] // heads,
      "P_drop": h["layer_prepostprocess_dropout"],
      "eps_ls": h["label_smoothing"], "pos": h["pos"], "steps": int(step),
      "dev PPL": float(ppl), "dev BLEU": float(bleu),
      "params (M)": int(params.group(1).replace(",", "")) / 1e6,
      "minutes": minutes}


def train_row(args, row, model, hparams_set, overrides):
  run_dir = os.path.join(args.runs_dir, row)
  os.makedirs(run_dir, exist_ok=True)
  log_path = os.path.join(run_dir, "train.log")
  start = time.time()
  run(["t2t-trainer", "--problem=translate_ende", f"--data_dir={args.data_dir}",
       f"--output_dir={run_dir}", f"--model={model}",
       f"--hparams_set={hparams_set}",
       f"--hparams={overrides_string(overrides, args.warmup)}",
       f"--train_steps={args.steps}", f"--local_eval_frequency={args.steps}",
       f"--save_checkpoints_steps={args.steps}", "--eval_bleu",
       f"--eval_bleu_lines={args.eval_lines}"], log_path)
  result = result_of(run_dir, log_path, round((time.time() - start) / 60, 1))
  with open(os.path.join(run_dir, RESULT), "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
  return result


def cell(value):
  if isinstance(value, float):
    return f"{value:.2f}" if value < 100 else f"{value:,.0f}"
  return str(value)


def table(results):
  """[(row, result)] -> a markdown table in the paper's layout."""
  lines = ["| " + " | ".join(COLUMNS) + " |",
           "|" + " --- |" * len(COLUMNS)]
  for row, result in results:
    lines.append("| " + " | ".join(
        [row] + [cell(result[c]) for c in COLUMNS[1:]]) + " |")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(
      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--multi30k_dir", default="../shared/data/multi30k")
  parser.add_argument("--data_dir", default="/tmp/t2t_data/multi30k")
  parser.add_argument("--runs_dir", default="/tmp/t2t_train/table3")
  parser.add_argument("--steps", type=int, default=600,
                      help="training steps of every row (equal budgets)")
  parser.add_argument("--warmup", type=int, default=400,
                      help="learning-rate warm-up steps of every row")
  parser.add_argument("--eval_lines", type=int, default=0,
                      help="val sentences decoded for dev BLEU (0: all)")
  parser.add_argument("--rows", default="",
                      help="comma-separated rows to train (default all: "
                      + ",".join(r[0] for r in ROWS) + ")")
  parser.add_argument("--hparams", default="",
                      help="extra overrides for every row (the test's toy "
                      "sizes)")
  args = parser.parse_args()
  known = {r[0]: r for r in ROWS}
  wanted = [r for r in args.rows.split(",") if r] or list(known)
  unknown = [r for r in wanted if r not in known]
  if unknown:
    sys.exit(f"--rows: unknown row(s) {', '.join(unknown)}; the rows are "
             + ", ".join(known))
  run(["t2t-datagen", "--problem=translate_ende", f"--data_dir={args.data_dir}",
       f"--raw_data_dir={args.multi30k_dir}",
       "--raw_prefixes=train=train,dev=val,test=test_2016_flickr",
       "--vocab_size=8000"])
  for row in wanted:
    _, model, hparams_set, overrides = known[row]
    done = os.path.join(args.runs_dir, row, RESULT)
    if os.path.exists(done):
      print(f"{row}: done before ({done}), skipped", flush=True)
      continue
    if args.hparams:
      overrides = dict(overrides, **dict(
          kv.split("=", 1) for kv in args.hparams.split(",")))
    result = train_row(args, row, model, hparams_set, overrides)
    print(f"{row}: " + ", ".join(f"{k} {cell(v)}" for k, v in
                                 result.items()), flush=True)
  # Every row done so far, this run's or earlier ones', in the paper's order.
  results = []
  for row in known:
    done = os.path.join(args.runs_dir, row, RESULT)
    if os.path.exists(done):
      with open(done, encoding="utf-8") as f:
        results.append((row, json.load(f)))
  missing = [row for row in known if row not in dict(results)]
  text = table(results)
  if missing:
    text += f"\n\nNot trained yet: {', '.join(missing)}."
  with open(os.path.join(args.runs_dir, "table3.md"), "w",
            encoding="utf-8") as f:
    f.write(text + "\n")
  print()
  print(text)


if __name__ == "__main__":
  main()
