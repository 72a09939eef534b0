"""Many hparams settings of a small recipe trained side by side on one
accelerator under Keras's JAX backend, each scored by greedy val BLEU: a
search for settings that a CPU recipe then confirms (the recipe's own
trainer, beam and averaging decide; this only ranks candidates).

Two steps:

  # here, with TensorFlow: the datagen'd problem's ids, val references and
  # vocabulary into one file (keep it out of git; carry it to the machine)
  python benchmarks/val_sweep_jax.py export --data_dir=/tmp/t2t_data/multi30k \\
      --problem=translate_ende --references=../shared/data/multi30k/val.de \\
      --out=benchmarks/sweep/multi30k.npz

  # there, with JAX and Keras (benchmarks/jax_env.sh), no TensorFlow
  KERAS_BACKEND=jax python benchmarks/val_sweep_jax.py run \\
      --data=benchmarks/sweep/multi30k.npz --configs=SWEEP.txt \\
      [--parallel=1] [--steps=6000] [--evals=2000,4000] [--out_dir=DIR]

SWEEP.txt holds one setting a line: ``name hparams_set overrides [seed]``
(overrides as ``a=1,b=0.2`` or ``-``; ``#`` comments). Each setting trains
``train_steps`` updates (its hparams' unless ``--steps``) of the trainer's
loss and optimizer (label-smoothed cross-entropy, the hparams' schedule) on
batches of ``batch_size`` tokens grouped by length as the trainer's
pipeline groups them (section 5.1), keeps the hparams' moving average of
the weights (``ema_decay``), and is scored at each ``--evals`` step and at
the end on the whole val set, greedy, with the average of the last
``--average`` snapshots taken every ``--snapshot_every`` steps (the
recipe's ``t2t-avg-all``). Prints one table (sacreBLEU and lowercase 13a
BLEU; not the recipe's beam, whose figures are higher) and writes one JSON
line a score to ``--out_dir``. ``--parallel`` runs settings in that many
processes; on one H200 they mostly took turns on the GPU (8 processes:
1.25x one process's steps a second in all, once compiled).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_data import batches, export, load_corpus, pad_rows, read_settings
from t2t_keras.ids import EOS_ID


# -- one setting (JAX) --------------------------------------------------------
class Setting:
  """One hparams setting's model, jitted step, moving average and greedy
  search under the JAX backend."""

  def __init__(self, hparams_set, overrides, seed, vocab_size, steps):
    import jax
    import keras
    from t2t_keras import registry
    from t2t_keras.decoding.backends.jax_search import JaxSearch
    from t2t_keras.decoding.options import decode_hparams
    from t2t_keras.training.moving_average import averaged, decay_at
    import train_speed_jax
    self.hparams = registry.hparams(hparams_set)
    self.hparams.parse(overrides)
    self.steps = steps or self.hparams.train_steps
    keras.utils.set_random_seed(seed)
    model, optimizer = train_speed_jax.build(
        self.hparams, vocab_size,
        "float32" if self.hparams.activation_dtype == "float32"
        else "mixed_bfloat16", self.steps)
    smoothing = float(self.hparams.label_smoothing)
    loss_fn = train_speed_jax.loss_fn_of(model, smoothing)
    step = train_speed_jax.train_step_fn(model, optimizer, smoothing)
    decay = float(self.hparams.get("ema_decay", 0.0))

    @jax.jit
    def update(state, shadow, features, t):
      """One step and the moving average after it, one dispatch."""
      loss, state = step(state, features)
      if decay <= 0:
        return loss, state, state[0]
      d = decay_at(decay, t)   # the library's rule (training.ema's)
      return loss, state, [averaged(s, w, d)
                           for s, w in zip(shadow, state[0])]

    @jax.jit
    def dev_loss(trainable, non_trainable, features):
      _, (_, loss_sum, count) = loss_fn(trainable, non_trainable, features,
                                        False)
      return loss_sum, count

    # The library's greedy search (decoding.backends.jax_search), the weights passed
    # in: trainable values (a moving average's too), then non-trainable.
    greedy = JaxSearch(model, decode_hparams("beam_size=1"))

    self._update, self._dev_loss, self._greedy = update, dev_loss, greedy
    self.state = train_speed_jax.initial_state(model, optimizer)
    self.shadow = list(self.state[0])

  def train_step(self, features, t):
    """One update (t counted from 1); returns the loss (a device scalar)."""
    loss, self.state, self.shadow = self._update(self.state, self.shadow,
                                                 features, float(t))
    return loss

  def score(self, weights, dev, vocab, chunk=256):
    """(dev loss per token, greedy hypotheses) of ``weights`` on dev."""
    non_trainable = self.state[1]
    loss_sum = count = 0.0
    hyps = []
    src, tgt = dev
    width = -(-max(len(s) for s in src) // 8) * 8
    out_width = -(-max(len(t) for t in tgt) // 8) * 8 + 16
    for start in range(0, len(src), chunk):
      inputs = pad_rows(src[start:start + chunk], width, chunk)
      targets = pad_rows(tgt[start:start + chunk], out_width, chunk)
      s, c = self._dev_loss(weights, non_trainable,
                            {"inputs": inputs, "targets": targets})
      loss_sum, count = loss_sum + float(s), count + float(c)
      ids = np.asarray(self._greedy(
          inputs, values=list(weights) + list(non_trainable))[0][:, 0])
      for row in ids[:len(src[start:start + chunk])]:
        row = list(row)
        row = row[:row.index(EOS_ID)] if EOS_ID in row else row
        hyps.append(vocab.decode([i for i in row if i]))
    return loss_sum / count, hyps


def bleu(hyps, refs):
  """(sacreBLEU, lowercase 13a BLEU)."""
  import sacrebleu
  return (sacrebleu.corpus_bleu(hyps, [refs]).score,
          sacrebleu.corpus_bleu(hyps, [refs], lowercase=True).score)


def train_and_score(setting, corpus, args, log):
  """Trains one setting, logging a result dict at each scored step."""
  import jax
  name, hparams_set, overrides, seed = setting
  (src, tgt), dev, refs, vocab = corpus
  run = Setting(hparams_set, overrides, seed, vocab.get_piece_size(),
                args.steps)
  stream = batches(src, tgt, run.hparams.batch_size, run.hparams.max_length,
                   seed)
  marks = {int(s) for s in args.evals.split(",") if s} | {run.steps}
  snapshots, start, train_seconds = [], time.perf_counter(), 0.0
  for t in range(1, run.steps + 1):
    loss = run.train_step(next(stream), t)
    if t % args.snapshot_every == 0 or t in marks:
      snapshots = (snapshots + [run.shadow])[-args.average:]
    if t in marks:
      loss = float(loss)                # waits for the step
      train_seconds += time.perf_counter() - start
      weights = [sum(ws) / len(ws) for ws in zip(*snapshots)]
      dev_loss, hyps = run.score(jax.device_put(weights), dev, vocab)
      sacre, lower = bleu(hyps, refs)
      log(dict(name=name, hparams_set=hparams_set, overrides=overrides,
               seed=seed, step=t, train_loss=loss, dev_loss=dev_loss,
               bleu=sacre, bleu_lc=lower, averaged=len(snapshots),
               ms_per_step=1e3 * train_seconds / t))
      start = time.perf_counter()


def work(args, settings):
  """Runs ``settings`` one after another, appending results to
  results.jsonl in ``--out_dir``; stops starting new ones near
  ``--deadline_s``."""
  corpus = load_corpus(args)
  results = os.path.join(args.out_dir, "results.jsonl")
  began, longest = time.time(), 0.0

  def log(result):
    print(json.dumps(result), flush=True)
    with open(results, "a", encoding="utf-8") as f:
      f.write(json.dumps(result) + "\n")

  for setting in settings:
    if args.deadline_s and time.time() - began + longest > args.deadline_s:
      print(f"skipped {setting[0]} (seed {setting[3]}): too little time "
            "left before --deadline_s", flush=True)
      continue
    start = time.time()
    try:
      train_and_score(setting, corpus, args, log)
    except Exception as e:
      log(dict(name=setting[0], seed=setting[3], error=repr(e)[:300]))
    longest = max(longest, time.time() - start)


def table(out_dir):
  """The results as one markdown table, best final lowercase BLEU first;
  settings run with several seeds get a mean row too."""
  rows, errors = [], []
  with open(os.path.join(out_dir, "results.jsonl"), encoding="utf-8") as f:
    for line in f:
      r = json.loads(line)
      (errors if "error" in r else rows).append(r)
  finals = {}
  for r in rows:
    key = (r["name"], r["seed"])
    if r["step"] >= finals.get(key, {"step": -1})["step"]:
      finals[key] = r
  curve = {}
  for r in rows:
    curve.setdefault((r["name"], r["seed"]), []).append(
        f"{r['bleu_lc']:.2f}@{r['step']}")
  print("| setting | overrides | seed | steps | ms/step | dev loss | "
        "val BLEU lc, greedy, by step | sacreBLEU | lc BLEU |")
  print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
  for key, r in sorted(finals.items(), key=lambda kv: -kv[1]["bleu_lc"]):
    print(f"| {r['name']} | {r['overrides'] or '-'} | {r['seed']} | "
          f"{r['step']} | {r['ms_per_step']:.1f} | {r['dev_loss']:.4f} | "
          f"{' '.join(curve[key])} | {r['bleu']:.2f} | {r['bleu_lc']:.2f} |")
  by_name = {}
  for r in finals.values():
    by_name.setdefault(r["name"], []).append(r["bleu_lc"])
  several = {k: v for k, v in by_name.items() if len(v) > 1}
  if several:
    print("\n| setting | seeds | mean lc BLEU | min | max |")
    print("| --- | --- | --- | --- | --- |")
    for name, v in sorted(several.items(), key=lambda kv: -np.mean(kv[1])):
      print(f"| {name} | {len(v)} | {np.mean(v):.2f} | {min(v):.2f} | "
            f"{max(v):.2f} |")
  for r in errors:
    print(f"error in {r['name']} (seed {r['seed']}): {r['error']}")


def run(args):
  settings = read_settings(args.configs)
  os.makedirs(args.out_dir, exist_ok=True)
  if args.worker is not None:
    index, count = (int(x) for x in args.worker.split("/"))
    work(args, settings[index::count])
    return
  # Small models: no process takes most of the device's memory up front
  # (JAX's default), this one (which only names the device) included.
  os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
  import jax
  import keras
  print(f"Keras {keras.__version__} on JAX {jax.__version__}, device "
        f"{jax.devices()[0].device_kind}; {len(settings)} settings in "
        f"{args.parallel} process(es)", flush=True)
  open(os.path.join(args.out_dir, "results.jsonl"), "w").close()
  if args.parallel <= 1:
    work(args, settings)
  else:
    # Settings that differ only in their seed share compiled programs.
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR="/tmp/val_sweep_cache",
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0")
    workers, logs = [], []
    for i in range(args.parallel):
      logs.append(f"/tmp/val_sweep_worker{i}.log")
      with open(logs[-1], "w") as log:
        workers.append(subprocess.Popen(
            [sys.executable, __file__] + sys.argv[1:] +
            [f"--worker={i}/{args.parallel}"], stdout=log,
            stderr=subprocess.STDOUT, env=env))
    for w, log in zip(workers, logs):
      if w.wait():
        with open(log, encoding="utf-8", errors="replace") as f:
          print(f"{log} (exit {w.returncode}):\n" + "".join(f.readlines()[-15:]))
  table(args.out_dir)


def main():
  parser = argparse.ArgumentParser(
      description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
  sub = parser.add_subparsers(dest="command", required=True)
  ex = sub.add_parser("export")
  ex.add_argument("--data_dir", required=True)
  ex.add_argument("--problem", default="translate_ende")
  ex.add_argument("--references", required=True,
                  help="the val references, one line per dev pair")
  ex.add_argument("--out", required=True)
  rn = sub.add_parser("run")
  rn.add_argument("--data", required=True)
  rn.add_argument("--configs", required=True)
  rn.add_argument("--steps", type=int, default=0,
                  help="updates per setting (default: its train_steps)")
  rn.add_argument("--evals", default="",
                  help="steps scored besides the last, e.g. 2000,4000")
  rn.add_argument("--average", type=int, default=5)
  rn.add_argument("--snapshot_every", type=int, default=200)
  rn.add_argument("--dev_lines", type=int, default=0,
                  help="score only the first N val pairs (0: all)")
  rn.add_argument("--parallel", type=int, default=1)
  rn.add_argument("--deadline_s", type=float, default=0,
                  help="start no setting that would end after this")
  rn.add_argument("--out_dir", default="/tmp/val_sweep")
  rn.add_argument("--worker", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.command == "export":
    export(args)
  else:
    os.environ.setdefault("KERAS_BACKEND", "jax")
    run(args)


if __name__ == "__main__":
  main()
