"""Residual connections, dropout and layer normalization around a sub-layer.

Post-norm (the paper, section 3.1 and 5.4): ``LayerNorm(x + Dropout(f(x)))``.
Pre-norm (an option): ``x + Dropout(f(LayerNorm(x)))``, with a final
LayerNorm at the top of the stack.
"""

import keras

from t2t_keras.errors import UserError
from t2t_keras.layers.dropout import Dropout
from t2t_keras.layers.layer_norm import LayerNormalization

NORM_POSITIONS = ("post", "pre")
LAYER_NORM_EPSILON = 1e-6


def check_norm_position(norm_position):
  if norm_position not in NORM_POSITIONS:
    raise UserError(f"norm_position must be one of {NORM_POSITIONS}, got "
                     f"{norm_position!r}")
  return norm_position


class ResidualBlock(keras.layers.Layer):
  """Base of the encoder and decoder layers: ``num_sublayers`` residual
  connections, each with its own LayerNorm and a shared dropout rate.

  Subclasses wrap each sub-layer ``f`` as
  ``x = self.residual_out(i, x, f(self.residual_in(i, x)), training)``.
  """

  def __init__(self, num_sublayers, dropout, norm_position, **kwargs):
    super().__init__(**kwargs)
    self.norm_position = check_norm_position(norm_position)
    self.dropout = float(dropout)
    # One attribute per LayerNorm, not a list: Keras 3 does not expose lists
    # of layers to TensorFlow's object-based checkpoints.
    for i in range(num_sublayers):
      setattr(self, f"layer_norm_{i}", LayerNormalization(
          epsilon=LAYER_NORM_EPSILON, dtype=self.dtype_policy,
          name=f"layer_norm_{i}"))
    self._residual_dropout = Dropout(self.dropout)

  def build(self, x_shape):
    """Nothing of its own: each sub-layer builds on its first call. (A
    layer without ``build`` would be traced symbolically by Keras before
    its first call, every sub-layer with it.)"""
    del x_shape

  def residual_in(self, i, x):
    """The sub-layer's input: normalized first under pre-norm."""
    return self._norm(i)(x) if self.norm_position == "pre" else x

  def residual_out(self, i, x, y, training):
    """``x + Dropout(y)``, then normalized under post-norm."""
    z = x + self._residual_dropout(y, training=training)
    return self._norm(i)(z) if self.norm_position == "post" else z

  def _norm(self, i):
    return getattr(self, f"layer_norm_{i}")
