"""The encoder layer and stack, section 3.1 of the paper."""

import keras

from t2t_keras.layers.block import TransformerBlock
from t2t_keras.layers.stack import Stack


@keras.saving.register_keras_serializable(package="t2t_keras")
class EncoderLayer(TransformerBlock):
  """Self-attention then a feed-forward network, each residual.

  Args: as ``TransformerBlock`` (h, d_k, d_v, d_ff, dropouts, norm_position).

  Call args:
    x: [batch, length, d_model].
    bias: additive padding mask [batch, 1, 1, length].
  Returns:
    [batch, length, d_model].
  """

  def __init__(self, num_heads, key_size, value_size, filter_size, **kwargs):
    super().__init__(2, num_heads, key_size, value_size, filter_size,
                     **kwargs)

  def call(self, x, bias=None, training=None):
    y = self.self_attention(self.residual_in(0, x), bias=bias,
                            training=training)
    x = self.residual_out(0, x, y, training)
    y = self.feed_forward(self.residual_in(1, x), training=training)
    return self.residual_out(1, x, y, training)


@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerEncoder(Stack):
  """The encoder stack.

  Args: as ``Stack``; ``layer_options`` are ``EncoderLayer``'s (num_heads,
  key_size, value_size, filter_size, ...).

  Call args:
    x: embedded inputs [batch, length, d_model] (already scaled).
    bias: padding mask [batch, 1, 1, length].
  Returns:
    the encoder output [batch, length, d_model].
  """

  default_layer = EncoderLayer

  def call(self, x, bias=None, training=None):
    x = self.embed_positions(x, training=training)
    for layer in self.blocks:
      x = layer(x, bias=bias, training=training)
    return self.finish(x)
