"""speed_table.py's worker for TF Model Garden's Seq2SeqTransformer
(``official.nlp.modeling.models``, what its translation task builds). Run
with the bench-garden environment's python (TensorFlow 2.20, tf-keras).

The paper's sizes and dropout (residual dropout only, no attention or ReLU
dropout); Model Garden's own defaults otherwise: pre-norm (its post-norm
decoder block fails under mixed bfloat16, adding a float32 LayerNorm output
to a bfloat16 tensor; the matrix products are the same) and projections
without biases (``use_bias=False``; ours have biases, as tensor2tensor's). Loss: its translation task's label-smoothed
cross-entropy; Adam; a tf.function step. Decoding: its own beam search
(``beam_size`` 1 for greedy).

  python benchmarks/speed/garden_worker.py --task train|beam|greedy[,...]
      --model base|big|toy --precision float32|bfloat16|xla [--quick]
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp.modeling import models
from official.nlp.tasks import translation

import shapes


def build(args, s, beam):
  if args.precision == "bfloat16":
    tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  tf.random.set_seed(0)
  m = shapes.MODELS[args.model]
  stacks = [cls(num_layers=m["layers"], num_attention_heads=m["heads"],
                intermediate_size=m["d_ff"], dropout_rate=m["dropout"],
                attention_dropout_rate=0.0, intermediate_dropout=0.0,
                norm_first=True)
            for cls in (models.TransformerEncoder, models.TransformerDecoder)]
  return models.Seq2SeqTransformer(
      vocab_size=s["vocab"], embedding_width=m["d_model"],
      dropout_rate=m["dropout"], beam_size=beam, alpha=shapes.ALPHA,
      extra_decode_length=s["output_length"] - s["decode_source_length"],
      encoder_layer=stacks[0], decoder_layer=stacks[1], eos_id=shapes.EOS)


def train(args, s):
  model = build(args, s, shapes.BEAM)
  optimizer = tf_keras.optimizers.Adam(1e-4, beta_1=0.9, beta_2=0.98,
                                       epsilon=1e-9)
  rng = np.random.RandomState(0)
  inputs = tf.constant(shapes.random_ids(rng, s["batch"], s["source_length"],
                                         s["vocab"]), tf.int32)
  targets = tf.constant(shapes.random_ids(rng, s["batch"],
                                          s["target_length"], s["vocab"]),
                        tf.int32)

  @tf.function(jit_compile=args.precision == "xla")
  def step():
    with tf.GradientTape() as tape:
      logits = model({"inputs": inputs, "targets": targets}, training=True)
      losses, weights = translation._padded_cross_entropy_loss(
          tf.cast(logits, tf.float32), targets, shapes.LABEL_SMOOTHING,
          s["vocab"])
      loss = tf.reduce_sum(losses) / tf.reduce_sum(weights)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  seconds = shapes.timed_steps(lambda: step().numpy(), args.steps)
  tokens = s["batch"] * (s["source_length"] + s["target_length"])
  shapes.emit(seconds_per_step=seconds, tokens_per_s=tokens / seconds,
              version=tf.__version__)


def decode(args, s):
  model = build(args, s, shapes.BEAM if args.task == "beam" else 1)
  rng = np.random.RandomState(1)
  inputs = tf.constant(shapes.random_ids(
      rng, s["sentences"], s["decode_source_length"], s["vocab"],
      eos_last=True), tf.int32)
  search = tf.function(lambda x: model({"inputs": x})["outputs"])
  seconds = shapes.timed_steps(lambda: search(inputs).numpy(), args.steps)
  shapes.emit(seconds_per_batch=seconds,
              sentences_per_s=s["sentences"] / seconds,
              version=tf.__version__)


def main():
  args, s = shapes.worker_args(__doc__, ("train", "beam", "greedy"),
                               ("float32", "bfloat16", "xla"))
  shapes.for_each_task(
      args, lambda a: (train if a.task == "train" else decode)(a, s))


if __name__ == "__main__":
  main()
