"""Mixed bfloat16: where should the logits be computed?

Under ``activation_dtype=bfloat16`` our attention logits (Q K^T) and the
pre-softmax projection (x W^T) run on bfloat16 inputs; the kernels accumulate
in float32 and the results are cast to float32 before the mask, softmax and
loss. The alternative is to cast their inputs to float32 first. This script
measures both choices, each alone and together:

- speed: one transformer_base-shaped training step (vocabulary 37,000, 16
  sentences x 64 source + 64 target tokens), median of ``--steps`` steps;
- loss: dev loss of transformer_tiny after ``--train_steps`` steps on the
  embedded translate_synthetic problem, for each of ``--seeds``.

The float32 variants are applied here by wrapping the two layers' ``call``
(the library has one code path; this script is where the other is tried).

Usage: python benchmarks/mixed_precision.py [--steps 8 --train_steps 400]
"""

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras
from keras import ops
import numpy as np
import tensorflow as tf

from t2t_keras import registry
from t2t_keras.data.datagen import generate
from t2t_keras.layers.dot_product_attention import ScaledDotProductAttention
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.training.run import CheckpointPolicy, RunConfig, train
from t2t_keras.training.trainer import Trainer

# variant name -> (pre-softmax projection in float32, attention logits in float32)
VARIANTS = {"as shipped": (False, False), "float32 projection": (True, False),
            "float32 attention": (False, True), "both float32": (True, True)}


@contextlib.contextmanager
def float32_inputs(projection, attention):
  """Within the block, the chosen products take float32 inputs."""
  embedding_call = TokenEmbedding.call
  attention_call = ScaledDotProductAttention.call

  def projection_call(self, inputs, reverse=False):
    if not reverse:
      return embedding_call(self, inputs)
    return ops.matmul(ops.cast(inputs, "float32"),
                      ops.transpose(ops.cast(self.embeddings, "float32")))

  def logits_call(self, query, key, value, bias=None, extra_logits=None,
                  extra_values=None, training=None, return_weights=False):
    return attention_call(self, ops.cast(query, "float32"),
                          ops.cast(key, "float32"), value, bias=bias,
                          extra_logits=extra_logits,
                          extra_values=extra_values, training=training,
                          return_weights=return_weights)

  if projection:
    TokenEmbedding.call = projection_call
  if attention:
    ScaledDotProductAttention.call = logits_call
  try:
    yield
  finally:
    TokenEmbedding.call = embedding_call
    ScaledDotProductAttention.call = attention_call


def step_seconds(policy, args):
  """Median seconds of one transformer_base-shaped training step."""
  keras.config.set_dtype_policy(policy)
  keras.utils.set_random_seed(0)
  hp = registry.hparams("transformer_base")
  model = registry.model("transformer")(hp, args.vocab)
  model.build()
  rng = np.random.RandomState(0)
  feats = {k: tf.constant(rng.randint(2, args.vocab,
                                      size=(args.batch, args.length)),
                          tf.int64) for k in ("inputs", "targets")}
  trainer = Trainer(lambda: model, hp)
  trainer.train_step([feats])  # trace and warm up
  times = []
  for _ in range(args.steps):
    start = time.perf_counter()
    trainer.train_step([feats])
    times.append(time.perf_counter() - start)
  keras.config.set_dtype_policy("float32")
  return statistics.median(times)


def dev_loss(data_dir, dtype, seed, args):
  """transformer_tiny's dev loss after ``args.train_steps`` steps."""
  lines = []
  with tempfile.TemporaryDirectory() as out:
    train(RunConfig("translate_synthetic", "transformer_tiny", out,
                    data_dir=data_dir, seed=seed, train_steps=args.train_steps,
                    eval_every=args.train_steps,
                    hparams_overrides="batch_size=2048,"
                    f"learning_rate_warmup_steps=200,activation_dtype={dtype}",
                    checkpoints=CheckpointPolicy(every_secs=None)),
          log=lines.append)
  last = [line for line in lines if "dev loss" in line][-1]
  return float(last.split("dev loss")[1].split()[0])


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--vocab", type=int, default=37000)
  parser.add_argument("--batch", type=int, default=16)
  parser.add_argument("--length", type=int, default=64)
  parser.add_argument("--steps", type=int, default=8)
  parser.add_argument("--train_steps", type=int, default=400)
  parser.add_argument("--seeds", default="1234,7,99")
  args = parser.parse_args()
  seeds = [int(s) for s in args.seeds.split(",")]
  print(f"speed: transformer_base, vocab {args.vocab}, {args.batch} x "
        f"{args.length} source + target tokens, median of {args.steps} steps; "
        f"loss: transformer_tiny on translate_synthetic, {args.train_steps} "
        f"steps, seeds {args.seeds}; {os.cpu_count()} CPUs, "
        f"TF {tf.__version__}, Keras {keras.__version__}")
  print(f"{'policy / variant':34s} {'s/step':>7s} {'tokens/s':>9s}  "
        f"{'dev loss per seed':>24s} {'mean':>7s}")
  rows = [("float32", "float32", (False, False))] + [
      ("mixed_bfloat16", name, arms) for name, arms in VARIANTS.items()]
  # Every speed first (nothing else may run meanwhile), then the losses.
  seconds = []
  for policy, _, arms in rows:
    with float32_inputs(*arms):
      seconds.append(step_seconds(policy, args))
  with tempfile.TemporaryDirectory() as data_dir:
    generate("translate_synthetic", data_dir, log=lambda _: None)
    for (policy, name, arms), step in zip(rows, seconds):
      dtype = "float32" if policy == "float32" else "bfloat16"
      with float32_inputs(*arms):
        losses = [dev_loss(data_dir, dtype, seed, args) for seed in seeds]
      label = policy if policy == "float32" else f"{policy} / {name}"
      per_seed = " ".join(f"{x:.4f}" for x in losses)
      print(f"{label:34s} {step:7.2f} "
            f"{2 * args.batch * args.length / step:9.0f}  {per_seed:>24s} "
            f"{statistics.mean(losses):7.4f}", flush=True)


if __name__ == "__main__":
  main()
