"""Which kernel layout a JAX search on this CPU should read: measured.

``kernel_layout`` holds each Dense kernel as [d_out, d_in]. Whether XLA's
CPU products of a step's few rows run faster that way than against Keras's
[d_in, d_out] depends on the CPU and on the rows: on a 2-core AMD EPYC
without AVX-512 the held layout was 1.1-1.2x faster at one row and 1.3-1.7x
at four (benchmarks/step_floor.py's chain); on one with AVX-512 the two tie
at one row and the held layout is 1.48x slower at four (a beam-4 search of
one sentence 1.3x slower end to end). So the search asks, for its rows a
step, once a process:

    transposed_faster(shapes, rows)   # bool

which times one chain of products over kernels of ``shapes`` in both
layouts, compiled with ``jax.jit``, interleaved (about a second, at the
first search of that many rows), and keeps the held layout unless Keras's
is faster by ``MARGIN``. The held layout also makes a self-attention step's
three products one and reads the embedding as it is, which the chain
leaves out: at one row, where the chains tie within 10% either way from
one probe to the next, a greedy search gains 1.2-1.4x from them; at four rows
on the AVX-512 CPU Keras's chain is 1.44x faster. The two layouts' products
differ only in rounding (the tests find the same ids in both).
``T2T_KERAS_KERNELS=1`` keeps the held layout without measuring.
"""

import functools
import os
import statistics
import time

MARGIN = 1.2        # Keras's layout must be this much faster to be read
REPEATS = 20        # timed calls of each chain, interleaved
WARMUP = 3          # untimed calls of each first (the first compiles)
CHAIN_BYTES = 64e6  # the chain's weights: more than a CPU's caches hold
MAX_COPIES = 8      # of each shape, however small (a small model's chain)


def prefer(held_seconds, keras_seconds, margin=MARGIN):
  """The rule: keep the held layout unless the median of
  ``keras_seconds`` is ``margin`` times faster than ``held_seconds``'s."""
  return (statistics.median(keras_seconds) * margin >
          statistics.median(held_seconds))


def transposed_faster(shapes, rows):
  """Whether a search whose steps multiply ``rows`` rows by kernels of
  ``shapes`` (a tuple of (d_in, d_out)) reads them held as [d_out, d_in]
  (module docstring); measured once a process for each (shapes, rows)."""
  if os.environ.get("T2T_KERAS_KERNELS", "") == "1":
    return True
  return _measured(tuple(sorted(set(shapes))), int(rows))


@functools.lru_cache(maxsize=None)
def _measured(shapes, rows):
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  rng = np.random.RandomState(0)
  per_set = 4 * sum(a * b for a, b in shapes)
  copies = min(MAX_COPIES, max(1, int(CHAIN_BYTES // per_set)))
  kernels = [rng.standard_normal(s).astype(np.float32)
             for _ in range(copies) for s in shapes]
  inputs = [jnp.asarray(rng.standard_normal((rows, k.shape[0]))
                        .astype(np.float32)) for k in kernels]
  keras_layout = [jnp.asarray(k) for k in kernels]
  held_layout = [jnp.asarray(np.ascontiguousarray(k.T)) for k in kernels]

  def chain(contract):
    return jax.jit(lambda ws, xs: sum(
        jnp.sum(contract(x, w)) for x, w in zip(xs, ws)))

  timed = {"held": (chain(lambda x, w: jnp.einsum("ri,oi->ro", x, w)),
                    held_layout),
           "keras": (chain(lambda x, w: x @ w), keras_layout)}
  seconds = {name: [] for name in timed}
  for repeat in range(WARMUP + REPEATS):
    for name, (run, weights) in timed.items():
      start = time.perf_counter()
      jax.block_until_ready(run(weights, inputs))
      if repeat >= WARMUP:
        seconds[name].append(time.perf_counter() - start)
  return prefer(seconds["held"], seconds["keras"])
