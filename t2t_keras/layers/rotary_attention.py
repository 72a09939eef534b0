"""Rotary position embeddings (Su et al. 2021, RoFormer) in self-attention:
queries and keys are rotated by their positions, so that q_m . k_n depends
on m - n only. With d = d_k and pairs (x_i, x_{i + d/2}) for i < d/2,

    rotate(x, m)_i       = x_i cos(m theta_i) - x_{i+d/2} sin(m theta_i)
    rotate(x, m)_{i+d/2} = x_{i+d/2} cos(m theta_i) + x_i sin(m theta_i)
    theta_i = 10000^(-2i/d)

Decoding caches keys already rotated at their own positions.
"""

import keras
from keras import ops

from t2t_keras.layers.multi_head_attention import MultiHeadAttention


def rotate(x, offset, base=10000.0):
  """x [batch, h, length, d] (d even) at positions offset, offset + 1, ...
  -> x rotated as above, same shape and dtype."""
  half = x.shape[-1] // 2
  theta = base ** (-ops.arange(half, dtype="float32") * 2.0 / (2 * half))
  positions = ops.cast(ops.arange(ops.shape(x)[2]) + offset, "float32")
  angles = positions[:, None] * theta[None, :]           # [length, d/2]
  cos = ops.cast(ops.cos(angles), x.dtype)
  sin = ops.cast(ops.sin(angles), x.dtype)
  first, second = x[..., :half], x[..., half:]
  return ops.concatenate([first * cos - second * sin,
                          second * cos + first * sin], axis=-1)


@keras.saving.register_keras_serializable(package="t2t_keras")
class RotaryMultiHeadAttention(MultiHeadAttention):
  """``MultiHeadAttention`` whose queries and keys are rotated by position
  (self-attention only; d_k even). Same arguments and weights."""

  def positioned(self, kind, heads, offset):
    """Queries and keys rotated by their positions; values unchanged."""
    return rotate(heads, offset) if kind in ("query", "key") else heads
