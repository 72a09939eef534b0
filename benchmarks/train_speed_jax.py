"""Training-step speed under Keras's JAX backend, without TensorFlow.

The same model code, loss (label-smoothed cross-entropy over non-padding
tokens) and optimizer (Adam with the paper's schedule) as t2t-trainer, in a
jitted stateless step on random full batches, so it runs where JAX is
installed and TensorFlow is not (a GPU machine, say). Prints one table:
tokens/s (source + target), ms/step, model TFLOP/s (the exact matrix-product
count of ``t2t_keras.analysis.cost``), the matmul peak measured in the same
run and the model FLOP utilization against it, and peak memory; beside the
paper's 8 x P100 figures (section 5.2: base steps of about 25,000 source +
25,000 target tokens in 0.4 s, big steps in 1.0 s).

Usage:
  KERAS_BACKEND=jax python benchmarks/train_speed_jax.py \
      [--sets transformer_base,transformer_big] [--batch 128] \
      [--source_length 32 --target_length 32] [--vocab 32000] \
      [--policies float32,mixed_bfloat16] [--steps 10]
"""

import argparse
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
# t2t_keras must be installed (``bash benchmarks/jax_env.sh install``): its
# hparams sets are the namespaced package t2t_keras.hparams_sets.

import jax
import jax.numpy as jnp
import keras
import numpy as np

from t2t_keras import registry
from t2t_keras.analysis import cost
from t2t_keras.models.config import TransformerConfig
from t2t_keras.training.loss import smoothed_cross_entropy
from t2t_keras.training.optimizer import optimizer_from_hparams

# Section 5.2: 8 P100 GPUs, ~25,000 + ~25,000 tokens a step; base 0.4 s a
# step, big 1.0 s. Tokens/s of the whole machine (source + target).
PAPER = {"transformer_base": 50000 / 0.4, "transformer_big": 50000 / 1.0}


def matmul_peak(dtype, n, repeats=10):
  """Measured FLOP/s of an [n, n] x [n, n] product in ``dtype``."""
  a = jnp.asarray(np.random.RandomState(0).rand(n, n), dtype)
  b = jnp.asarray(np.random.RandomState(1).rand(n, n), dtype)
  product = jax.jit(jnp.matmul)
  product(a, b).block_until_ready()
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    product(a, b).block_until_ready()
    times.append(time.perf_counter() - start)
  return 2 * n ** 3 / statistics.median(times)


def loss_fn_of(model, label_smoothing):
  """The trainer's loss as a stateless function: (trainable, non_trainable,
  features, training) -> (mean loss per token, (non_trainable, loss sum,
  token count))."""

  def loss_fn(trainable, non_trainable, features, training=True):
    logits, non_trainable = model.stateless_call(
        trainable, non_trainable, features, training=training)
    loss_sum, count = smoothed_cross_entropy(logits, features["targets"],
                                             label_smoothing)
    return loss_sum / count, (non_trainable, loss_sum, count)

  return loss_fn


def train_step_fn(model, optimizer, label_smoothing):
  """A jitted (state, features) -> (loss, state) step; state is the model's
  trainable and non-trainable variables and the optimizer's."""
  grad_fn = jax.value_and_grad(loss_fn_of(model, label_smoothing),
                               has_aux=True)

  @jax.jit
  def step(state, features):
    trainable, non_trainable, opt_vars = state
    (loss, (non_trainable, _, _)), grads = grad_fn(trainable, non_trainable,
                                                   features)
    trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads,
                                                    trainable)
    return loss, (trainable, non_trainable, opt_vars)

  return step


def peak_memory_gb():
  """Peak device memory (GPU) or peak resident memory of the process."""
  stats = jax.devices()[0].memory_stats() or {}
  if "peak_bytes_in_use" in stats:
    return stats["peak_bytes_in_use"] / 1e9
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def build(hparams, vocab_size, policy, train_steps=None):
  """(model, optimizer) of ``hparams``, built, their layers in ``policy``
  (the global policy is float32 again afterwards)."""
  keras.config.set_dtype_policy(policy)
  model = registry.model("transformer")(hparams, vocab_size)
  model.build()
  optimizer = optimizer_from_hparams(hparams, train_steps)
  optimizer.build(model.trainable_variables)
  keras.config.set_dtype_policy("float32")
  return model, optimizer


def initial_state(model, optimizer):
  """The step's state: (trainable, non-trainable, optimizer variables)."""
  return ([v.value for v in model.trainable_variables],
          [v.value for v in model.non_trainable_variables],
          [v.value for v in optimizer.variables])


def measure(hparams_set, policy, args):
  """(median seconds a step, (first loss, last loss), FLOPs a step) of one
  shape and precision."""
  # Not keras.utils.set_random_seed: it imports TensorFlow where installed.
  hparams = registry.hparams(hparams_set)
  hparams.parse(args.hparams)
  model, optimizer = build(hparams, args.vocab, policy)
  step = train_step_fn(model, optimizer, hparams.label_smoothing)
  rng = np.random.RandomState(0)
  features = {
      "inputs": jnp.asarray(rng.randint(
          2, args.vocab, (args.batch, args.source_length)), "int32"),
      "targets": jnp.asarray(rng.randint(
          2, args.vocab, (args.batch, args.target_length)), "int32")}
  state = initial_state(model, optimizer)
  times, losses = [], []
  for i in range(args.steps + 2):      # two warm-up steps (the first traces)
    start = time.perf_counter()
    loss, state = step(state, features)
    losses.append(float(loss))         # waits for the step
    if i >= 2:
      times.append(time.perf_counter() - start)
  config = TransformerConfig.from_hparams(hparams)
  flops = cost.step_flops(config, (args.vocab, args.vocab),
                          args.source_length, args.target_length, args.batch)
  return statistics.median(times), (losses[0], losses[-1]), flops


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--sets", default="transformer_base,transformer_big")
  parser.add_argument("--policies", default="float32,mixed_bfloat16")
  parser.add_argument("--vocab", type=int, default=32000)
  parser.add_argument("--batch", type=int, default=128)
  parser.add_argument("--source_length", type=int, default=32)
  parser.add_argument("--target_length", type=int, default=32)
  parser.add_argument("--steps", type=int, default=10)
  parser.add_argument("--hparams", default="",
                      help="overrides for every set, e.g. num_hidden_layers=1")
  parser.add_argument("--peak_size", type=int, default=0,
                      help="matmul size for the peak (default 8192 on an "
                           "accelerator, 4096 on CPU)")
  args = parser.parse_args()
  assert keras.backend.backend() == "jax", keras.backend.backend()
  device = jax.devices()[0]
  n = args.peak_size or (4096 if device.platform == "cpu" else 8192)
  peaks = {"float32": matmul_peak("float32", n),
           "mixed_bfloat16": matmul_peak("bfloat16", n)}
  tokens = args.batch * (args.source_length + args.target_length)
  print(f"Keras {keras.__version__} on JAX {jax.__version__}, device "
        f"{device.device_kind} ({device.platform}); batch {args.batch} x "
        f"({args.source_length} + {args.target_length}) tokens, vocabulary "
        f"{args.vocab}; median of {args.steps} steps; matmul peak "
        f"({n}^3): float32 {peaks['float32'] / 1e12:.1f}, bfloat16 "
        f"{peaks['mixed_bfloat16'] / 1e12:.1f} TFLOP/s")
  print("| set | precision | tokens/s | ms/step | model TFLOP/s | MFU | "
        "loss, first -> last step | peak memory GB | paper, 8 x P100 tokens/s |")
  print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
  for hparams_set in args.sets.split(","):
    for policy in args.policies.split(","):
      seconds, (first, last), flops = measure(hparams_set, policy, args)
      paper = PAPER.get(hparams_set)
      print(f"| {hparams_set} | {policy} | {tokens / seconds:,.0f} | "
            f"{seconds * 1e3:.1f} | {flops / seconds / 1e12:.2f} | "
            f"{flops / seconds / peaks[policy]:.0%} | {first:.2f} -> {last:.2f} | "
            f"{peak_memory_gb():.1f} | "
            f"{f'{paper:,.0f}' if paper else '-'} |", flush=True)
  imported = sorted(m for m in sys.modules if m.split(".")[0] == "tensorflow")
  assert not imported, f"TensorFlow was imported: {imported[:3]}"


if __name__ == "__main__":
  main()
