"""The machine's measured matrix-product peak, and a training budget scaled
by it.

Recipes state their budgets for a reference machine ("60 minutes on a CPU
whose float32 matmul peak is 433 GFLOP/s"); on a machine whose measured
peak is P the same work gets ``minutes * reference / P``. The peak is the
median rate of a square product as TensorFlow runs it, after a warm-up.
"""

import time

from t2t_keras.errors import UserError

DTYPES = ("float32", "bfloat16")


def matmul_peaks(size, repeats=5, chain=None):
  """{dtype name: FLOP/s} of ``chain`` [size, size] x [size, size] products
  in a row, in float32 and bfloat16, inside one function that returns a
  scalar: 2 * chain * size^3 over the median of ``repeats`` timed runs. No
  product goes back to the host, so on a GPU the figure is the device's,
  not the copy's. ``chain``: default 8 where a GPU is visible (one product
  there is shorter than a launch's overhead), else 1."""
  import tensorflow as tf
  if chain is None:
    chain = 8 if tf.config.list_physical_devices("GPU") else 1
  peaks = {}
  for name in DTYPES:
    # Rows summing to about 1/2: each product shrinks, none overflows.
    a = tf.cast(tf.random.uniform([size, size]) / size, tf.as_dtype(name))

    @tf.function
    def products(x):
      y = x
      for _ in range(chain):
        y = tf.matmul(y, x)
      return tf.reduce_sum(tf.cast(y, tf.float32))

    products(a).numpy()
    times = []
    for _ in range(repeats):
      start = time.perf_counter()
      products(a).numpy()
      times.append(time.perf_counter() - start)
    peaks[name] = 2 * chain * size ** 3 / sorted(times)[len(times) // 2]
  return peaks


def scaled_budget(minutes, reference_gflops, peak_gflops):
  """Minutes that match ``minutes`` on a machine of ``reference_gflops``,
  on one whose peak is ``peak_gflops`` (both float32 GFLOP/s)."""
  if peak_gflops <= 0 or reference_gflops <= 0:
    raise UserError("matmul peaks must be positive, got "
                    f"{reference_gflops} and {peak_gflops}")
  return minutes * reference_gflops / peak_gflops


def peak_report(budget_minutes=None, reference_gflops=433.0, size=4096):
  """Measures the peaks and says them in a line; with ``budget_minutes``
  a second line with that budget scaled to this machine. The last word of
  each line is its figure (GFLOP/s, minutes), for scripts."""
  peaks = {k: v / 1e9 for k, v in matmul_peaks(size).items()}
  lines = [f"bfloat16 matmul peak {peaks['bfloat16']:.0f} GFLOP/s; "
           f"float32 matmul peak (P) {peaks['float32']:.0f}"]
  if budget_minutes is not None:
    minutes = scaled_budget(budget_minutes, reference_gflops,
                            peaks["float32"])
    lines.append(f"training budget: {budget_minutes:g} min x "
                 f"{reference_gflops:g} / P = {minutes:.1f}")
  return "\n".join(lines)
