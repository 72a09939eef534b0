"""Which kernel layout a JAX search on this CPU should read: measured.

``kernel_layout`` holds the kernels packed for ``rows_product`` or as
[d_out, d_in]. Which of those or Keras's own [d_in, d_out] XLA's CPU
products of a step's few rows run fastest depends on the CPU and on the
rows: on a 2-core AMD EPYC without AVX-512 the transposed layout was
1.1-1.2x faster than Keras's at one row and 1.3-1.7x at four
(benchmarks/step_floor.py's chain); on one with AVX-512 the two tie at one
row and the transposed layout is 1.45x slower at four, where the packed one
is 1.26x faster than Keras's at one row and 2.2x at four. So the search
asks, for its rows a step, once a process:

    fastest(shapes, rows, packed)   # "packed", "transposed" or "keras"
    fastest(shapes, rows, packed, "int8")   # or "native" (rounded weights)

which times one chain of products over kernels of ``shapes`` in each layout
(packed only where ``packed``: ``rows_product`` built and the model is
float32; int8 or bfloat16 panels where the search's weights are rounded,
``kernels.quantize``), compiled with ``jax.jit``, interleaved (a second or
two, at the first search of that many rows). The packed layout is read
where its median is the lowest, then the native one (rounded weights:
their own dtype's product, ``kernel_layout``); else the transposed one
unless Keras's is faster by ``MARGIN``. Both held layouts also make a self-attention step's three
products one, which the chain leaves out (at one row, where the chains tie
within 10% either way from one probe to the next, a greedy search gains
1.2-1.4x from it and from reading the embedding as it is). The layouts'
products differ only in rounding (the tests find the same ids in each).
With rounded weights a machine's first choice for a shape is kept
(``_remembered``): its layouts round differently, and a decoder should
write the same lines every run. ``T2T_KERAS_KERNELS=1`` reads a held
layout without measuring: packed where allowed, else transposed.
"""

import functools
import hashlib
import json
import os
import statistics
import time

import numpy as np

from t2t_keras.io import files
from t2t_keras.io.cache import cache_folder, cpu_key
from t2t_keras.kernels import quantize
from t2t_keras.kernels import rows_product

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


def fastest(shapes, rows, packed, weights="float32"):
  """The layout a search whose steps multiply ``rows`` rows by kernels of
  ``shapes`` (a tuple of (d_in, d_out)) reads (module docstring); measured
  once a process for each (shapes, rows, packed, weights), with rounded
  weights once a machine: the packed layout holds ``weights``' panels
  (float32, int8 or bfloat16)."""
  if os.environ.get("T2T_KERAS_KERNELS", "") == "1":
    return "packed" if packed else "transposed"
  key = (tuple(sorted(set(shapes))), int(rows), bool(packed), weights)
  if weights == "float32":
    return _chosen(*key)
  return _remembered(key, lambda: _chosen(*key))


def _chosen(shapes, rows, packed, weights):
  """The rule over ``_measured``'s seconds."""
  seconds = _measured(shapes, rows, packed, weights)
  median = {name: statistics.median(s) for name, s in seconds.items()}
  for name in ("packed", "native"):
    if name in median and median[name] == min(median.values()):
      return name
  return ("transposed" if prefer(seconds["transposed"], seconds["keras"])
          else "keras")


def _remembered(key, choose):
  """The layout this machine chose for ``key`` before, else ``choose()``'s,
  kept in ``$T2T_KERAS_CACHE/layout_probe/CPU.json``. With rounded weights
  the layouts round differently (native int8 rounds each row of x too), so
  a machine keeps its first choice and decodes the same lines every run;
  deleting the file measures again. An unreadable or unwritable file:
  measured each process."""
  cpu = hashlib.sha256(cpu_key().encode()).hexdigest()[:12]
  path = os.path.join(cache_folder(), "layout_probe", f"{cpu}.json")
  name = repr(key)
  try:
    with open(path, encoding="utf-8") as f:
      known = json.load(f)
  except (OSError, ValueError):
    known = {}
  if not isinstance(known, dict):
    known = {}
  allowed = {"transposed", "keras"} | ({"packed"} if key[2] else set()) | (
      {"native"} if key[3] != "float32" else set())
  if known.get(name) in allowed:
    return known[name]
  known[name] = choose()
  try:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    files.write_text(path, json.dumps(known, indent=1, sort_keys=True))
  except OSError:
    pass
  return known[name]


def hold(matrix, layout, weights="float32"):
  """``matrix`` [d_in, d_out] as ``layout`` holds it for ``weights``
  (``kernel_layout``): "packed" panels (int8: (panels, scales)),
  "native" in the rounded dtype (int8: (Q, s)), "transposed" [d_out,
  d_in] or "keras" [d_in, d_out] of the rounded values in float32."""
  import jax.numpy as jnp
  if weights == "int8":
    q, scale = quantize.int8(np.asarray(matrix))
    if layout == "packed":
      return rows_product.pack_int8(q, scale)
    if layout == "native":
      return jnp.asarray(q), jnp.asarray(scale)
    matrix = jnp.asarray(quantize.dequantized(q, scale))
  elif weights == "bfloat16":
    rounded = quantize.bfloat16(np.asarray(matrix))
    if layout in ("packed", "native"):
      return (rows_product.pack(rounded) if layout == "packed" else
              jnp.asarray(rounded))
    matrix = jnp.asarray(rounded.astype(np.float32))
  if layout == "packed":
    return rows_product.pack(jnp.asarray(matrix))
  return jnp.transpose(matrix) if layout == "transposed" else matrix


@functools.lru_cache(maxsize=None)
def _measured(shapes, rows, packed, weights):
  """{layout: [seconds of each timed chain]}."""
  import jax
  import jax.numpy as jnp
  rng = np.random.RandomState(0)
  per_set = 4 * sum(a * b for a, b in shapes)
  copies = min(MAX_COPIES, max(1, int(CHAIN_BYTES // per_set)))
  kernels = [rng.standard_normal(s).astype(np.float32)
             for _ in range(copies) for s in shapes]
  inputs = [jnp.asarray(rng.standard_normal((rows, k.shape[0]))
                        .astype(np.float32)) for k in kernels]

  def chain(contract):
    return jax.jit(lambda ws, xs: sum(
        jnp.sum(contract(x, w, k.shape[1]))
        for x, w, k in zip(xs, ws, kernels)))

  timed = {
      "transposed": (chain(lambda x, w, n: jnp.einsum("ri,oi->ro", x, w)),
                     [jnp.asarray(np.ascontiguousarray(k.T))
                      for k in kernels]),
      "keras": (chain(lambda x, w, n: x @ w),
                [jnp.asarray(k) for k in kernels])}
  if weights != "float32":
    timed["native"] = (
        chain(lambda x, w, n: quantize.native_product(x, w)),
        [hold(k, "native", weights) for k in kernels])
  if packed:
    timed["packed"] = (
        chain(rows_product.held_product),
        [hold(k, "packed", weights) for k in kernels])
  seconds = {name: [] for name in timed}
  for repeat in range(WARMUP + REPEATS):
    for name, (run, weights) in timed.items():
      start = time.perf_counter()
      jax.block_until_ready(run(weights, inputs))
      if repeat >= WARMUP:
        seconds[name].append(time.perf_counter() - start)
  return seconds
