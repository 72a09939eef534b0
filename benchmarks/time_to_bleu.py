"""Time to BLEU beside a peer: the Multi30k recipe's model trained by
t2t-trainer and the same model trained by eole (OpenNMT-py's successor, in
its own environment: ``bash benchmarks/make_peer_envs.sh "" eole``), one
after the other on the same machine, same data and SentencePiece model,
shape, batch tokens, schedule, dropout, label smoothing and step budget.

Each side saves a checkpoint every ``--save_every`` updates and is timed
from the launch of its training command; afterwards every checkpoint
decodes val (beam 4, alpha 0.6, both sides) and is scored with sacreBLEU.
The table gives val BLEU at fixed wall-clock marks (the last checkpoint
saved by then), the time each side first reached val BLEU 30 and 35 and
their ratio (a bound where one side never got there), its target tokens/s
as it reports them, and test2016 BLEU of the average of its last
``--average`` checkpoints, beside the matmul peak measured in the same
run. Run it on an otherwise idle machine.

Where eole cannot match a setting: its layers are pre-norm only, with a
final LayerNorm after each stack (as the recipe's set; a set trained
post-norm, as the paper's, cannot be matched; both sides' norm positions
are printed under the table); its dropout also applies inside the
feed-forward layer, at P_drop, with no setting of its own (ours:
relu_dropout, 0.1 in the default --hparams_set, transformer_multi30k,
against P_drop 0.3);
its LayerNorm epsilon is 1e-5 (ours 1e-6). The recipe's exponential
moving average (ema_decay 0.999) is eole's ``average_decay`` 0.001: both
weigh update t's weights by max(1 - decay, 9 / (10 + t)), Marian's
warm-up, and save the average. Our side computes in the precision
``activation_dtype=auto`` picks (mixed bfloat16 on a CPU with bfloat16
units); eole's in ``--eole_dtype`` (default auto: bf16, torch's CPU
autocast, exactly where ours picks bfloat16).

Usage: python benchmarks/time_to_bleu.py [--multi30k_dir ../shared/data/multi30k]
         [--work_dir /tmp/time_to_bleu] [--steps 6000] [--save_every 400]
         [--peers ours,eole] [--marks 10,20,30,40,50,60] [--minutes 60]
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)

from t2t_keras.analysis.peak import matmul_peaks
from t2t_keras.io.lines import read_lines
from t2t_keras.metrics import bleu

EOLE_ENV = os.path.join(os.environ.get("T2T_KERAS_CACHE") or os.path.expanduser(
    "~/.cache/t2t_keras"), "bench-eole")
EOLE_TOOLS = os.path.join(HERE, "peers", "eole_tools.py")
OURS_TOKENS = re.compile(r"^step \d+/\d+ .* ([\d,]+) tokens/s", re.M)
EOLE_TOKENS = re.compile(r"(\d+)/\s*(\d+) tok/s")
BEAM, ALPHA = 4, 0.6
SPLITS = {"train": "train", "dev": "val", "test": "test_2016_flickr"}


def shape(args):
  """The recipe's model and schedule as plain numbers, from the hparams set
  (so the peer trains what t2t-trainer trains), ``activation_dtype=auto``
  resolved as t2t-trainer resolves it on this machine."""
  from t2t_keras.training.run import resolve_hparams
  return resolve_hparams(args.hparams_set, args.hparams, log=lambda _: None)


def eole_dtype(name, hparams):
  """eole's compute_dtype for ``--eole_dtype``; ``auto`` follows ours."""
  if name != "auto":
    return name
  return "bf16" if hparams.activation_dtype == "bfloat16" else "fp32"


def run(command, log, env=None, minutes=None):
  """Runs ``command`` with its output in ``log``: (start time, seconds,
  output). With ``minutes``, a command still running then is stopped
  (SIGTERM) and that is not a failure: what it saved stays."""
  start = time.time()
  with open(log, "w", encoding="utf-8") as f:
    process = subprocess.Popen(command, stdout=f, stderr=subprocess.STDOUT,
                               cwd=REPO, env=env)
    try:
      code = process.wait(timeout=minutes * 60 if minutes else None)
    except subprocess.TimeoutExpired:
      process.terminate()
      process.wait()
      code = 0
      f.write(f"\n[time_to_bleu: stopped after {minutes:g} min]\n")
  seconds = time.time() - start
  with open(log, encoding="utf-8") as f:
    output = f.read()
  if code:
    raise SystemExit(f"{' '.join(command)} failed (exit {code}); "
                     f"the end of {log}:\n{output[-2000:]}")
  return start, seconds, output


def t2t(command, *flags):
  return [sys.executable, "-m", f"t2t_keras.bin.{command}", *flags]


def val_bleu(hypotheses_file, args):
  references = read_lines(os.path.join(args.multi30k_dir, "val.de"))
  return bleu.sacre_bleu(read_lines(hypotheses_file), references)[0]


def test_bleu(hypotheses_file, args):
  """(sacreBLEU, lowercase tokenized BLEU) on test2016."""
  hypotheses = read_lines(hypotheses_file)
  references = read_lines(os.path.join(args.multi30k_dir,
                                       "test_2016_flickr.de"))
  return (bleu.sacre_bleu(hypotheses, references)[0],
          bleu.tokenized_bleu(hypotheses, references, lowercase=True))


class Ours:
  name, key = "t2t_keras", "ours"

  def __init__(self, args, hparams):
    self.args, self.hparams = args, hparams
    self.dir = os.path.join(args.work_dir, "ours")

  def train(self):
    a = self.args
    if os.path.isdir(self.dir):
      shutil.rmtree(self.dir)
    start, seconds, output = run(t2t(
        "t2t_trainer", "--problem=translate_ende", f"--data_dir={a.data_dir}",
        f"--output_dir={self.dir}", f"--hparams_set={a.hparams_set}",
        f"--hparams={a.hparams}", f"--train_steps={a.steps}",
        f"--save_checkpoints_steps={a.save_every}", "--save_checkpoints_secs=0",
        f"--keep_checkpoint_max={a.steps // a.save_every + 1}",
        f"--local_eval_frequency={a.steps}", "--eval_steps=1",
        "--eval_bleu=false", f"--random_seed={a.seed}"),
        os.path.join(a.work_dir, "ours_train.log"), minutes=a.minutes)
    figures = [float(v.replace(",", "")) for v in OURS_TOKENS.findall(output)]
    checkpoints = sorted(
        (int(m.group(1)), os.path.join(self.dir, f"ckpt-{m.group(1)}"))
        for m in (re.match(r"ckpt-(\d+)\.index$", f)
                  for f in os.listdir(self.dir)) if m)
    times = [os.path.getmtime(path + ".index") - start
             for _, path in checkpoints]
    return (seconds, statistics.median(figures[1:] or figures or [0]),
            checkpoints, times)

  def decode(self, checkpoint, source, out):
    a = self.args
    run(t2t("t2t_decoder", "--problem=translate_ende", f"--data_dir={a.data_dir}",
            f"--output_dir={self.dir}", f"--checkpoint_path={checkpoint}",
            f"--decode_from_file={source}", f"--decode_to_file={out}",
            f"--decode_hparams=beam_size={BEAM},alpha={ALPHA}"), out + ".log")

  def average(self, checkpoints):
    avg = os.path.join(self.dir, "avg")
    run(t2t("t2t_avg_all", f"--output_dir={self.dir}",
            f"--n={self.args.average}", f"--avg_dir={avg}"),
        os.path.join(self.args.work_dir, "ours_avg.log"))
    return avg


class Eole:
  name, key = "eole 0.6.4", "eole"

  def __init__(self, args, hparams):
    self.args, self.hparams = args, hparams
    self.dir = os.path.join(args.work_dir, "eole")
    self.python = os.path.join(EOLE_ENV, "bin", "python")
    self.eole = os.path.join(EOLE_ENV, "bin", "eole")
    self.env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count()))

  def config(self, vocab, spm):
    a, h = self.args, self.hparams
    data = lambda split: {
        "path_src": os.path.join(a.multi30k_dir, SPLITS[split] + ".en"),
        "path_tgt": os.path.join(a.multi30k_dir, SPLITS[split] + ".de"),
        "transforms": ["sentencepiece"]}
    with open(vocab, encoding="utf-8") as f:
      size = sum(1 for _ in f) + 4
    return {
        "save_data": os.path.join(self.dir, "data"), "overwrite": True,
        "seed": a.seed, "report_every": 100, "src_vocab": vocab,
        "tgt_vocab": vocab, "share_vocab": True, "src_vocab_size": size,
        "tgt_vocab_size": size, "vocab_size_multiple": 1, "n_sample": 0,
        "data": {"corpus_1": data("train"), "valid": data("dev")},
        "transforms": ["sentencepiece"],
        "transforms_configs": {"sentencepiece": {
            "src_subword_model": spm, "tgt_subword_model": spm}},
        "model": {
            "architecture": "transformer", "layers": h.num_hidden_layers,
            "hidden_size": h.hidden_size, "heads": h.num_heads,
            "transformer_ff": h.filter_size, "share_embeddings": True,
            "share_decoder_embeddings": h.shared_embedding_and_softmax_weights,
            "add_qkvbias": True, "add_ffnbias": True,
            "add_final_linear_bias": True,
            "embeddings": {"word_vec_size": h.hidden_size,
                           "position_encoding_type": "SinusoidalInterleaved"}},
        "training": {
            "model_path": os.path.join(self.dir, "model"),
            "train_steps": a.steps, "save_checkpoint_steps": a.save_every,
            "keep_checkpoint": -1, "valid_steps": a.steps,
            "batch_type": "tokens", "batch_size": h.batch_size,
            "valid_batch_size": h.batch_size, "normalization": "tokens",
            "accum_count": [h.gradient_accumulation_steps], "accum_steps": [0],
            "optim": "adam", "adam_beta1": h.optimizer_adam_beta1,
            "adam_beta2": h.optimizer_adam_beta2,
            "adam_eps": h.optimizer_adam_epsilon,
            "learning_rate": h.learning_rate, "decay_method": "noam",
            "warmup_steps": h.learning_rate_warmup_steps,
            "dropout": [h.layer_prepostprocess_dropout],
            "attention_dropout": [h.attention_dropout], "dropout_steps": [0],
            "label_smoothing": h.label_smoothing, "max_grad_norm": 0.0,
            "param_init_method": "xavier_uniform", "num_workers": 0,
            "world_size": 1, "gpu_ranks": [],
            "compute_dtype": eole_dtype(a.eole_dtype, h),
            "average_decay": 1 - h.ema_decay if h.ema_decay else 0.0},
    }

  def train(self):
    a = self.args
    if os.path.isdir(self.dir):
      shutil.rmtree(self.dir)
    os.makedirs(self.dir)
    spm = spm_model(a.data_dir)
    vocab = os.path.join(self.dir, "vocab.txt")
    run([self.python, EOLE_TOOLS, "vocab", spm, vocab],
        os.path.join(self.dir, "vocab.log"))
    config = os.path.join(self.dir, "config.yaml")
    with open(config, "w", encoding="utf-8") as f:
      json.dump(self.config(vocab, spm), f, indent=1)   # JSON is YAML
    start, seconds, output = run([self.eole, "train", "-config", config],
                                 os.path.join(a.work_dir, "eole_train.log"),
                                 self.env, minutes=a.minutes)
    figures = [float(t) for _, t in EOLE_TOKENS.findall(output)]
    model = os.path.join(self.dir, "model")
    checkpoints = sorted(
        (int(m.group(1)), os.path.join(model, m.group(0)))
        for m in (re.match(r"step_(\d+)$", d) for d in os.listdir(model)) if m)
    times = [os.path.getmtime(os.path.join(path, "model.00.safetensors"))
             - start for _, path in checkpoints]
    return seconds, statistics.median(figures[1:] or figures or [0]), \
        checkpoints, times

  def decode(self, checkpoint, source, out):
    run([self.eole, "predict", "-model_path", checkpoint, "-src", source,
         "-output", out, "-beam_size", str(BEAM), "-length_penalty", "wu",
         "-alpha", str(ALPHA), "-batch_size", "32", "-batch_type", "sents"],
        out + ".log", self.env)

  def average(self, checkpoints):
    avg = os.path.join(self.dir, "avg")
    run([self.python, EOLE_TOOLS, "average", avg,
         *[path for _, path in checkpoints[-self.args.average:]]],
        os.path.join(self.args.work_dir, "eole_avg.log"))
    return avg


def spm_model(data_dir):
  """The SentencePiece model t2t-datagen wrote in ``data_dir``, or None."""
  found = sorted(glob.glob(os.path.join(data_dir,
                                       "vocab.translate_ende.*.model")))
  return found[-1] if found else None


def measure(side, args):
  """One side's row: training, val BLEU of every checkpoint, test BLEU of
  the average."""
  print(f"training {side.name} ...", flush=True)
  seconds, tokens, checkpoints, times = side.train()
  curve = []
  capped = args.minutes and seconds >= args.minutes * 60
  for i, ((step, path), at) in enumerate(zip(checkpoints, times)):
    out = os.path.join(args.work_dir, f"{side.key}_val_{step}.txt")
    try:
      side.decode(path, os.path.join(args.multi30k_dir, "val.en"), out)
    except SystemExit:
      if not (capped and i == len(checkpoints) - 1):
        raise
      print(f"  {side.name} step {step}: not readable (being saved when "
            f"the {args.minutes:g}-minute cap stopped training); left out",
            flush=True)
      checkpoints = checkpoints[:-1]
      break
    curve.append((at, step, val_bleu(out, args)))
    print(f"  {side.name} step {step} at {at / 60:.1f} min: val BLEU "
          f"{curve[-1][2]:.2f}", flush=True)
  avg = side.average(checkpoints)
  out = os.path.join(args.work_dir, f"{side.key}_test2016.txt")
  side.decode(avg, os.path.join(args.multi30k_dir, "test_2016_flickr.en"), out)
  return dict(name=side.name, seconds=seconds, tokens=tokens, curve=curve,
              test=test_bleu(out, args))


def reached(curve, threshold):
  return next((at for at, _, score in curve if score >= threshold), None)


def table(rows, args, peaks):
  marks = [float(m) for m in args.marks.split(",")]
  thresholds = [float(t) for t in args.thresholds.split(",")]
  print(f"\nmatmul peak (TensorFlow): float32 {peaks['float32'] / 1e9:,.0f}, "
        f"bfloat16 {peaks['bfloat16'] / 1e9:,.0f} GFLOP/s; {args.steps} "
        f"steps, a checkpoint every {args.save_every}, beam {BEAM}\n")
  head = (["toolkit", "training", "target tokens/s"]
          + [f"val BLEU at {m:g} min" for m in marks]
          + [f"time to val {t:g}" for t in thresholds]
          + [f"test2016 (avg of last {args.average}) sacreBLEU / lc tok"])
  print("| " + " | ".join(head) + " |")
  print("|" + " --- |" * len(head))
  for row in rows:
    at_marks = []
    for mark in marks:
      saved = [score for at, _, score in row["curve"] if at <= mark * 60]
      at_marks.append(f"{saved[-1]:.2f}" if saved else "-")
    times = [reached(row["curve"], t) for t in thresholds]
    cells = ([row["name"], f"{row['seconds'] / 60:.1f} min",
              f"{row['tokens']:,.0f}"] + at_marks
             + [f"{t / 60:.1f} min" if t is not None else "not reached"
                for t in times]
             + [f"{row['test'][0]:.2f} / {row['test'][1]:.2f}"])
    print("| " + " | ".join(cells) + " |")
  if len(rows) == 2:
    for t in thresholds:
      print(ratio_line(rows, t))


def ratio_line(rows, threshold):
  """Time to ``threshold`` val BLEU of rows[0] over rows[1]'s (two of
  measure()'s rows: name, seconds, curve). Where one side never got there,
  its training time bounds the ratio."""
  a, b = rows
  time_a, time_b = (reached(r["curve"], threshold) for r in rows)
  name = f"time to val BLEU {threshold:g}: {a['name']} / {b['name']}"
  if time_a is not None and time_b is not None:
    return f"{name} = {time_a / time_b:.2f}x"
  if time_a is not None:
    return (f"{name} < {time_a / b['seconds']:.2f}x ({b['name']} did not "
            f"reach it in {b['seconds'] / 60:.1f} min)")
  if time_b is not None:
    return (f"{name} > {a['seconds'] / time_b:.2f}x ({a['name']} did not "
            f"reach it in {a['seconds'] / 60:.1f} min)")
  return f"{name}: neither reached it"


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--multi30k_dir", default="../shared/data/multi30k")
  parser.add_argument("--data_dir", default="/tmp/t2t_data/multi30k",
                      help="t2t-datagen's output (made here if absent)")
  parser.add_argument("--work_dir", default="/tmp/time_to_bleu")
  parser.add_argument(
      "--hparams_set", default="transformer_multi30k",
      help="the recipe's set (docs/performance.md's table was made with "
      "--hparams=label_smoothing=0.1)")
  parser.add_argument("--hparams", default="")
  parser.add_argument("--vocab_size", type=int, default=8000)
  parser.add_argument("--steps", type=int, default=6000)
  parser.add_argument("--save_every", type=int, default=400)
  parser.add_argument("--average", type=int, default=5)
  parser.add_argument("--minutes", type=float, default=None,
                      help="stop each side's training after this many "
                      "minutes (its checkpoints so far are measured)")
  parser.add_argument("--seed", type=int, default=1234)
  parser.add_argument("--peers", default="ours,eole")
  parser.add_argument("--eole_dtype", default="auto",
                      help="eole's compute_dtype: fp32, bf16, or auto (bf16 "
                      "where activation_dtype=auto picks bfloat16 for ours)")
  parser.add_argument("--marks", default="10,20,30,40,50,60",
                      help="wall-clock minutes")
  parser.add_argument("--thresholds", default="30,35")
  parser.add_argument("--quick", action="store_true",
                      help="a small matmul for the peak (checks the script)")
  args = parser.parse_args()
  args.multi30k_dir = os.path.abspath(args.multi30k_dir)
  os.makedirs(args.work_dir, exist_ok=True)
  if spm_model(args.data_dir) is None:
    run(t2t("t2t_datagen", "--problem=translate_ende",
            f"--data_dir={args.data_dir}", f"--raw_data_dir={args.multi30k_dir}",
            "--raw_prefixes=" + ",".join(f"{k}={v}" for k, v in SPLITS.items()),
            f"--vocab_size={args.vocab_size}"),
        os.path.join(args.work_dir, "datagen.log"))
  peaks = matmul_peaks(1024 if args.quick else 4096)
  hparams = shape(args)
  sides = {"ours": Ours, "eole": Eole}
  rows, missing = [], []
  for name in args.peers.split(","):
    if name == "eole" and not os.path.isfile(os.path.join(EOLE_ENV, ".complete")):
      missing.append(f"eole: not installed ({EOLE_ENV}); "
                     "bash benchmarks/make_peer_envs.sh \"\" eole")
      continue
    rows.append(measure(sides[name](args, hparams), args))
  table(rows, args, peaks)
  print(f"precision: t2t_keras {hparams.activation_dtype} activations, eole "
        f"compute_dtype {eole_dtype(args.eole_dtype, hparams)}")
  print(f"norm position: t2t_keras {hparams.norm_position}, eole pre "
        "(its only one)")
  for line in missing:
    print(line)


if __name__ == "__main__":
  main()
