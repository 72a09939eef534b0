"""Training-step speed of transformer_base-shaped models on this machine.

Prints tokens/s (source + target tokens, padding included: every batch here is
full) for our Transformer and for a reference built from stock
``keras.layers.MultiHeadAttention`` at the same shapes, in float32 and in
mixed bfloat16. Both use the same loss, optimizer and tf.function step.

Usage: python benchmarks/train_speed.py [--batch 16 --length 64 --steps 4]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

from t2t_keras import registry  # pylint: disable=g-import-not-at-top
from t2t_keras.training.trainer import Trainer  # pylint: disable=g-import-not-at-top


class KerasReference(keras.Model):
  """Post-norm encoder-decoder from stock Keras layers (the baseline)."""

  def __init__(self, hp, vocab):
    super().__init__()
    d, h, ff, n = hp.hidden_size, hp.num_heads, hp.filter_size, 6
    self.embed = keras.layers.Embedding(vocab, d)
    self.enc = [self._block(d, h, ff, cross=False) for _ in range(n)]
    self.dec = [self._block(d, h, ff, cross=True) for _ in range(n)]
    self.out = keras.layers.Dense(vocab, dtype="float32")

  @staticmethod
  def _block(d, h, ff, cross):
    mha = lambda: keras.layers.MultiHeadAttention(h, d // h)  # pylint: disable=unnecessary-lambda-assignment
    block = {"self": mha(), "ffn1": keras.layers.Dense(ff, activation="relu"),
             "ffn2": keras.layers.Dense(d),
             "norms": [keras.layers.LayerNormalization() for _ in range(3)]}
    if cross:
      block["cross"] = mha()
    return block

  def call(self, features, training=None):
    x = self.embed(features["inputs"])
    for b in self.enc:
      x = b["norms"][0](x + b["self"](x, x, training=training))
      x = b["norms"][1](x + b["ffn2"](b["ffn1"](x)))
    memory, y = x, self.embed(features["targets"])
    for b in self.dec:
      y = b["norms"][0](y + b["self"](y, y, use_causal_mask=True,
                                      training=training))
      y = b["norms"][1](y + b["cross"](y, memory, training=training))
      y = b["norms"][2](y + b["ffn2"](b["ffn1"](y)))
    return self.out(y)


def measure(kind, policy, args):
  keras.config.set_dtype_policy(policy)
  keras.utils.set_random_seed(0)
  hp = registry.hparams(args.hparams_set)
  if kind == "t2t_keras":
    model = registry.model("transformer")(hp, args.vocab)
    model.build()
  rng = np.random.RandomState(0)
  feats = {k: tf.constant(rng.randint(2, args.vocab,
                                      size=(args.batch, args.length)),
                          tf.int64) for k in ("inputs", "targets")}
  if kind != "t2t_keras":
    model = KerasReference(hp, args.vocab)
    model(feats)  # create the weights
  trainer = Trainer(lambda: model, hp)
  trainer.train_step([feats])  # trace and warm up
  start = time.perf_counter()
  for _ in range(args.steps):
    trainer.train_step([feats])
  seconds = (time.perf_counter() - start) / args.steps
  keras.config.set_dtype_policy("float32")
  return seconds, 2 * args.batch * args.length / seconds


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--hparams_set", default="transformer_base")
  parser.add_argument("--vocab", type=int, default=37000)
  parser.add_argument("--batch", type=int, default=16)
  parser.add_argument("--length", type=int, default=64)
  parser.add_argument("--steps", type=int, default=4)
  parser.add_argument("--models", default="t2t_keras,keras_reference")
  parser.add_argument("--policies", default="float32,mixed_bfloat16")
  args = parser.parse_args()
  print(f"{args.hparams_set}, vocab {args.vocab}, batch {args.batch} x "
        f"{args.length} source + target tokens, {os.cpu_count()} CPUs, "
        f"TF {tf.__version__}, Keras {keras.__version__}")
  print(f"{'model':16s} {'policy':15s} {'s/step':>8s} {'tokens/s':>9s}")
  for kind in args.models.split(","):
    for policy in args.policies.split(","):
      seconds, rate = measure(kind, policy, args)
      print(f"{kind:16s} {policy:15s} {seconds:8.2f} {rate:9.0f}",
            flush=True)


if __name__ == "__main__":
  main()
