"""Weights rounded for decoding: int8 with one scale per output channel,
or bfloat16 (``--decode_hparams=weights=int8|bfloat16``).

For a matrix W [d_in, d_out] (Keras's layout: y = x W), int8 keeps, per
output column n (CTranslate2's per-row scale of its [d_out, d_in] layout),
symmetric about zero:

    s_n = max_k |W[k, n]| / 127       (1 where the column is all zeros)
    Q[k, n] = round(W[k, n] / s_n)    in [-127, 127], round half to even
    x W ~= (x Q) * s                  (``dequantized``: Q * s)

bfloat16 keeps W's 8 most significant mantissa bits (round to nearest
even, as ``ml_dtypes`` and TensorFlow cast). Made once, in numpy, where a
model is prepared for decoding (``models.prepared``); every backend reads
the same rounded values, so TensorFlow's, XLA's and JAX's searches decode
the same rounded model. ``native_product`` multiplies in the rounded
dtype under JAX (``kernel_layout``'s "native" layout): int8 x int8 with
each row of x rounded to int8 on the fly, one scale a row.
"""

import ml_dtypes
import numpy as np

WEIGHTS = ("float32", "bfloat16", "int8")
INT8_MAX = 127.0


def check(weights):
  """``weights`` if it is one of ``WEIGHTS``; else ValueError."""
  if weights not in WEIGHTS:
    raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got "
                     f"{weights!r}")
  return weights


def int8(w):
  """W [d_in, d_out] (array-like) -> (Q int8 [d_in, d_out], s float32
  [d_out])."""
  w = np.asarray(w, np.float32)
  peak = np.max(np.abs(w), axis=0)
  scale = np.where(peak > 0, peak / INT8_MAX, 1.0).astype(np.float32)
  q = np.clip(np.rint(w / scale), -INT8_MAX, INT8_MAX).astype(np.int8)
  return q, scale


def dequantized(q, scale):
  """Q [d_in, d_out] int8, s [d_out] -> Q * s, float32."""
  return q.astype(np.float32) * np.asarray(scale, np.float32)


def bfloat16(w):
  """W rounded to bfloat16 (an ``ml_dtypes.bfloat16`` array)."""
  return np.asarray(w, np.float32).astype(ml_dtypes.bfloat16)


def rounded(w, weights):
  """W as ``weights`` reads it, in float32: W itself, W through bfloat16,
  or Q * s."""
  if check(weights) == "int8":
    return dequantized(*int8(w))
  if weights == "bfloat16":
    return bfloat16(w).astype(np.float32)
  return np.asarray(w, np.float32)


def native_product(x, held):
  """x [..., d_in] float times a matrix held "native" -> [..., d_out] in
  x's dtype: ``held`` (Q int8 [d_in, d_out], s [d_out]), each row of x
  rounded to int8 with its own scale, or W bfloat16 [d_in, d_out]."""
  import jax
  import jax.numpy as jnp
  if isinstance(held, tuple):
    q, scale = held
    peak = jnp.max(jnp.abs(x), axis=-1, keepdims=True)
    rows = jnp.where(peak > 0, peak / INT8_MAX, 1.0)
    qx = jnp.clip(jnp.round(x / rows), -INT8_MAX, INT8_MAX).astype(jnp.int8)
    y = jax.lax.dot_general(qx, q, (((x.ndim - 1,), (0,)), ((), ())),
                            preferred_element_type=jnp.int32)
    return (y.astype(jnp.float32) * rows * scale).astype(x.dtype)
  y = jax.lax.dot_general(x.astype(jnp.bfloat16), held,
                          (((x.ndim - 1,), (0,)), ((), ())),
                          preferred_element_type=jnp.float32)
  return y.astype(x.dtype)
