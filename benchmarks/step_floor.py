"""The floor under a decoding step: the base model's matrix products of one
step alone, one after the other, with nothing else (no attention, no
LayerNorm, no search), as each runtime runs them, and the bytes of weights
they read. At one sentence a step reads every decoder weight and the
pre-softmax matrix once (about 154 MB in float32), so this chain's time is
what any float32 decoder pays a step on this machine; the latency table's
seconds over its 30 steps are to be read against it.

Per decoder layer: W^Q, W^K, W^V, W^O of self-attention, W^Q and W^O of
encoder-decoder attention (its keys and values come from the source,
once), the two feed-forward matrices; then the [d_model, vocab] pre-softmax
product. Rows: 1 (greedy) and 4 (beam 4) unless ``--rows`` names others.
Runtimes: numpy (its BLAS), TensorFlow graph (float32, and bfloat16 as
the prepared model multiplies with ``weights=bfloat16``) and XLA
(``tf.function``), and JAX (``jax.jit``) where
installed in both of the layouts its searches read: each matrix as Keras
holds it, [d_in, d_out], and as [d_out, d_in] multiplied as x W^T, the
layout a search reads where ``layout_probe.py`` finds it faster for its
rows (``t2t_keras/kernels/kernel_layout.py``), and packed in panels for
``kernels/rows_product.py``'s handler where it builds. Each cell: the median of
``--repeats`` chains, milliseconds.

  python benchmarks/step_floor.py [--layers 6] [--d_model 512] [--d_ff 2048]
      [--vocab 32000] [--repeats 20] [--rows 1,4] [--quick]

``--quick``: toy sizes, one repeat (checks the command, measures nothing).
"""

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "speed"))

import shapes


def matrices(layers, d_model, d_ff, vocab):
  """The step's weights in product order, float32 [d_in, d_out] each."""
  rng = np.random.RandomState(0)
  sizes = [(d_model, d_model)] * 6 + [(d_model, d_ff), (d_ff, d_model)]
  out = []
  for _ in range(layers):
    out += [rng.standard_normal(s).astype(np.float32) * 0.02 for s in sizes]
  return out + [rng.standard_normal((d_model, vocab)).astype(np.float32) * 0.02]


def chain(x, weights, matmul, d_model, d_in=0):
  """Each product's input is the previous one's output (cut to d_model
  columns where the next matrix wants them): the order a step keeps.
  ``matmul(x, w)`` -> [rows, d_out]; ``d_in``: the axis of ``w`` that is
  its input (0: [d_in, d_out]; 1: [d_out, d_in], ``matmul`` multiplying
  by its transpose)."""
  for w, following in zip(weights[:-1], weights[1:]):
    y = matmul(x, w)
    x = y if y.shape[1] == following.shape[d_in] else y[:, :d_model]
  return matmul(x, weights[-1])


def runtimes(weights, d_model):
  """{name: (rows -> a function running one chain)}."""
  found = {"numpy": lambda x: (lambda: chain(x, weights, np.matmul, d_model))}
  import tensorflow as tf
  held = [tf.constant(w) for w in weights]
  halves = [tf.constant(w, tf.bfloat16) for w in weights]

  def half_matmul(x, w):
    """The prepared model's bfloat16 product (models/prepared/products.py):
    x rounded to bfloat16, the result float32."""
    return tf.cast(tf.matmul(tf.cast(x, tf.bfloat16), w), tf.float32)

  for name, jit, ws, matmul in (
      ("TensorFlow graph", False, held, tf.matmul),
      ("TensorFlow graph bfloat16", False, halves, half_matmul),
      ("TensorFlow XLA", True, held, tf.matmul)):
    def make(x, jit=jit, ws=ws, matmul=matmul):
      fn = tf.function(lambda: chain(tf.constant(x), ws, matmul, d_model),
                       jit_compile=jit, autograph=False)
      return lambda: fn().numpy()
    found[name] = make
  try:
    import jax
    import jax.numpy as jnp
  except ImportError:
    return found
  for name, d_in, layout in (("JAX [d_in, d_out]", 0, lambda w: w),
                             ("JAX [d_out, d_in]", 1, lambda w: w.T)):
    on_device = [jnp.asarray(np.ascontiguousarray(layout(w)))
                 for w in weights]
    fn = jax.jit(lambda x, ws, d_in=d_in: chain(
        x, ws, lambda a, w: jnp.einsum(("ri,io->ro", "ri,oi->ro")[d_in], a, w),
        d_model, d_in=d_in))
    found[name] = (lambda x, fn=fn, ws=on_device: (
        lambda: fn(jnp.asarray(x), ws).block_until_ready()))
  from t2t_keras.kernels import rows_product
  if rows_product.available():
    # Packed [panels, d_in, P]: d_in is axis 1; every panel's columns
    # counted (the base model's widths are whole panels).
    packed = [rows_product.pack(jnp.asarray(w)) for w in weights]
    fn = jax.jit(lambda x, ws: chain(
        x, ws, lambda a, w: rows_product.product(
            a, w, w.shape[0] * w.shape[2]), d_model, d_in=1))
    found["JAX packed (rows_product)"] = (lambda x, fn=fn: (
        lambda: fn(jnp.asarray(x), packed).block_until_ready()))
  return found


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--layers", type=int, default=6)
  parser.add_argument("--d_model", type=int, default=512)
  parser.add_argument("--d_ff", type=int, default=2048)
  parser.add_argument("--vocab", type=int, default=32000)
  parser.add_argument("--repeats", type=int, default=20)
  parser.add_argument("--rows", default="1,4",
                      help="comma-separated row counts (the latency "
                           "table's: 1,4,8,128)")
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args()
  if args.quick:
    args.layers, args.d_model, args.d_ff, args.vocab = 1, 32, 64, 100
    args.repeats = 1
  from t2t_keras.analysis.peak import matmul_peaks
  weights = matrices(args.layers, args.d_model, args.d_ff, args.vocab)
  megabytes = sum(w.nbytes for w in weights) / 1e6
  size = 256 if args.quick else 4096
  peak = matmul_peaks(size)["float32"] / 1e9
  found = runtimes(weights, args.d_model)
  print(f"one step's products: {len(weights)} matrices, {megabytes:.0f} MB "
        f"of float32 weights; matmul peak ({size}^3, TensorFlow) float32 "
        f"{peak:,.0f} GFLOP/s")
  print("| rows | " + " | ".join(found) + " |")
  print("|" + " --- |" * (len(found) + 1))
  for rows in (int(r) for r in args.rows.split(",")):
    x = np.random.RandomState(1).standard_normal(
        (rows, args.d_model)).astype(np.float32)
    cells = [(shapes.timed_steps(make(x), args.repeats, warmup=3) * 1e3,
              megabytes / (2 if "bfloat16" in name else 1))
             for name, make in found.items()]
    print(f"| {rows} | " + " | ".join(
        f"{c:.2f} ms ({mb / c:.0f} GB/s)" for c, mb in cells) + " |")


if __name__ == "__main__":
  main()
