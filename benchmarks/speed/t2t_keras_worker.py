"""speed_table.py's worker for t2t_keras (its Trainer, its beam search),
for its exported SavedModel (t2t-exporter's code, the ``decode_ids``
signature TF Serving runs) and for CTranslate2 (the same random model
exported with t2t-exporter's code). ``--precision=xla`` decodes with the
search compiled by XLA (t2t-decoder --xla; a SavedModel: t2t-exporter
--xla). Decoding ours, ``--precision=int8`` rounds the decoder's weights
to int8 (``--decode_hparams=weights=int8``, float32 activations) and
``bfloat16`` computes in bfloat16 with the decoder's weights stored in
bfloat16 (``weights=bfloat16``); CTranslate2 takes either as its compute
type.

  python benchmarks/speed/t2t_keras_worker.py --task train|fit|beam|greedy[,...]
      --model base|big|toy --precision float32|bfloat16|xla|int8
      [--system t2t_keras|savedmodel|ctranslate2] [--quick]
      [--sentences N] [--output_length L] [--export_to DIR]

``--export_to DIR`` (with --system=savedmodel) keeps each task's export in
DIR/TASK/1 and times nothing: before_after.py --paired times two trees'
exports in one process.
"""

import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
# T2T_KERAS_TREE: another checkout's t2t_keras under this worker
# (before_after.py's ``fit``, a task older workers lack).
sys.path.insert(0, os.environ.get("T2T_KERAS_TREE") or
                os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)

import keras
import numpy as np
import tensorflow as tf

import shapes
from t2t_keras import registry
from t2t_keras.decoding import beam_search, greedy_decode
from t2t_keras.training.trainer import Trainer


def build(model_name, vocab, policy):
  keras.config.set_dtype_policy(policy)
  keras.utils.set_random_seed(0)
  hparams = registry.hparams("transformer_base")
  hparams.parse(shapes.overrides(model_name))
  model = registry.model("transformer")(hparams, vocab)
  model.build()
  return model, hparams


def train(args, s):
  policy = "mixed_bfloat16" if args.precision == "bfloat16" else "float32"
  model, hparams = build(args.model, s["vocab"], policy)
  trainer = Trainer(lambda: model, hparams,
                    jit_compile=args.precision == "xla")
  rng = np.random.RandomState(0)
  features = {k: tf.constant(shapes.random_ids(rng, s["batch"], length,
                                               s["vocab"]), tf.int64)
              for k, length in (("inputs", s["source_length"]),
                                ("targets", s["target_length"]))}
  if args.task == "fit":
    # The loop t2t-trainer runs (Trainer.fit: hooks, progress lines every
    # ``steps``), over one batch repeated, after 2 updates of warm-up.
    data = iter(tf.data.Dataset.from_tensors(features).repeat())
    quiet = lambda _: None
    trainer.fit(data, 2, log_every=2, log=quiet)
    start = time.perf_counter()
    trainer.fit(data, 2 + args.steps, log_every=args.steps, log=quiet)
    seconds = (time.perf_counter() - start) / args.steps
  else:
    seconds = shapes.timed_steps(lambda: trainer.train_step([features]),
                                 args.steps)
  tokens = s["batch"] * (s["source_length"] + s["target_length"])
  shapes.emit(seconds_per_step=seconds, tokens_per_s=tokens / seconds)


def rounded_weights(args):
  """The decode hparam ``weights`` of ``--precision``."""
  return args.precision if args.precision in ("int8", "bfloat16") else (
      "float32")


def prepared(model, weights):
  """``model`` prepared with its decoder's step matrices and W^T rounded
  (``prepare_for_decoding``; the speed is t2t-decoder's), or, for
  float32, itself: an earlier tree's library (before_after.py), which has
  no ``weights``, decodes as it always did."""
  if weights == "float32":
    return model
  from t2t_keras.models.prepared import prepare_for_decoding
  return prepare_for_decoding(model, True, weights=weights)


def decode_ours(args, s, inputs):
  policy = "mixed_bfloat16" if args.precision == "bfloat16" else "float32"
  model, _ = build(args.model, s["vocab"], policy)
  model = prepared(model, rounded_weights(args))
  extra = s["output_length"] - s["decode_source_length"]
  if args.task == "beam":
    fn = lambda x: beam_search(model, x, shapes.BEAM, shapes.ALPHA, extra)[0]
  else:
    fn = lambda x: greedy_decode(model, x, extra)[0]
  search = tf.function(fn, input_signature=[tf.TensorSpec([None, None],
                                                          tf.int32)],
                       jit_compile=args.precision == "xla" or None)
  batch = tf.constant(inputs, tf.int32)
  return shapes.timed_steps(lambda: search(batch).numpy(), args.steps)


class IdText(tf.Module):
  """A stand-in vocabulary for the random model's export: a line is its
  space-separated ids (the timed ``decode_ids`` signature never uses it)."""

  def __init__(self, size):
    super().__init__()
    self.tf_tokenizer = self
    self.size = size

  def word_starts(self):   # what the exporter's warm-up requests spell with
    return [True] * self.size

  def encode(self, line):
    return [int(i) for i in line.split()]

  def decode(self, ids):
    return " ".join(str(i) for i in ids)

  def tokenize(self, lines):
    return tf.strings.to_number(tf.strings.split(lines), tf.int32)

  def tf_decode(self, ids):
    return tf.strings.reduce_join(tf.strings.as_string(ids), axis=1,
                                  separator=" ")


def export_savedmodel(args, s, folder):
  """The random base model exported for ``args.task`` into ``folder``
  (t2t-exporter's code; version 1): its path."""
  from t2t_keras.decoding.options import decode_hparams
  from t2t_keras.export.exporter import export
  policy = "mixed_bfloat16" if args.precision == "bfloat16" else "float32"
  model, _ = build(args.model, s["vocab"], policy)
  beam = shapes.BEAM if args.task == "beam" else 1
  weights = rounded_weights(args)
  hparams = decode_hparams(
      f"beam_size={beam},alpha={shapes.ALPHA},"
      f"extra_length={s['output_length'] - s['decode_source_length']}"
      + ("" if weights == "float32" else f",weights={weights}"))
  xla = {"xla": True} if args.precision == "xla" else {}
  return export(model, IdText(s["vocab"]), hparams, folder, version=1, **xla)


def decode_savedmodel(args, s, inputs):
  with tempfile.TemporaryDirectory() as folder:
    path = export_savedmodel(args, s, folder)
    signature = tf.saved_model.load(path).signatures["decode_ids"]
    batch = tf.constant(inputs, tf.int32)
    return shapes.timed_steps(
        lambda: signature(input_ids=batch)["output_ids"].numpy(), args.steps)


def decode_ct2(args, s, inputs):
  import ctranslate2
  from t2t_keras.decoding.options import decode_hparams
  from t2t_keras.export.ctranslate2 import save_model
  model, _ = build(args.model, s["vocab"], "float32")
  pieces = ["<pad>", "</s>", "<unk>"] + [f"p{i}" for i in range(3, s["vocab"])]
  hparams = decode_hparams(f"extra_length={s['output_length']}")
  with tempfile.TemporaryDirectory() as folder:
    save_model(model, pieces, pieces, hparams, folder)
    translator = ctranslate2.Translator(
        folder, device="cpu", compute_type=args.precision,
        inter_threads=1, intra_threads=os.cpu_count())
  # CTranslate2 adds nothing to the source (EOS is one of its tokens, as in
  # ours) and counts the output's EOS within max_decoding_length.
  tokens = [[pieces[i] for i in row] for row in inputs]
  beam = shapes.BEAM if args.task == "beam" else 1
  return shapes.timed_steps(lambda: translator.translate_batch(
      tokens, beam_size=beam, length_penalty=shapes.ALPHA,
      max_decoding_length=s["output_length"], return_end_token=True,
      max_batch_size=len(tokens)), args.steps)


def main():
  args, s = shapes.worker_args(__doc__, ("train", "fit", "beam", "greedy"),
                               ("float32", "bfloat16", "xla", "int8"),
                               systems=("t2t_keras", "savedmodel",
                                        "ctranslate2"))
  shapes.for_each_task(args, lambda a: run_task(a, s))


def run_task(args, s):
  if args.task in ("train", "fit"):
    train(args, s)
    return
  if args.export_to:
    if args.system != "savedmodel":
      raise SystemExit("--export_to: only with --system=savedmodel")
    shapes.emit(export=export_savedmodel(
        args, s, os.path.join(args.export_to, args.task)))
    return
  rng = np.random.RandomState(1)
  inputs = shapes.random_ids(rng, s["sentences"], s["decode_source_length"],
                             s["vocab"], eos_last=True)
  decode = {"t2t_keras": decode_ours, "savedmodel": decode_savedmodel,
            "ctranslate2": decode_ct2}[args.system]
  seconds = decode(args, s, inputs)
  shapes.emit(seconds_per_batch=seconds, sentences_per_s=len(inputs) / seconds)


if __name__ == "__main__":
  main()
