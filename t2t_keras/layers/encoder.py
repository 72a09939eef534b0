"""The encoder layer and stack, section 3.1 of the paper."""

import keras

from t2t_keras.layers.feed_forward import PositionwiseFeedForward
from t2t_keras.layers.multi_head_attention import MultiHeadAttention
from t2t_keras.layers.residual import LAYER_NORM_EPSILON, ResidualBlock
from t2t_keras.layers.positional_encoding import positional_layer


@keras.saving.register_keras_serializable(package="t2t_keras")
class EncoderLayer(ResidualBlock):
  """Self-attention then a feed-forward network, each residual.

  Args:
    num_heads, key_size, value_size: h, d_k, d_v.
    filter_size: d_ff.
    dropout: P_drop on each sub-layer output.
    attention_dropout, relu_dropout: dropout inside the sub-layers.
    norm_position: "post" (the paper) or "pre".

  Call args:
    x: [batch, length, d_model].
    bias: additive padding mask [batch, 1, 1, length].
  Returns:
    [batch, length, d_model].
  """

  def __init__(self, num_heads, key_size, value_size, filter_size,
               dropout=0.1, attention_dropout=0.0, relu_dropout=0.0,
               norm_position="post", **kwargs):
    super().__init__(2, dropout, norm_position, **kwargs)
    self.num_heads, self.key_size, self.value_size = (num_heads, key_size,
                                                      value_size)
    self.filter_size = filter_size
    self.attention_dropout = attention_dropout
    self.relu_dropout = relu_dropout
    self.self_attention = MultiHeadAttention(
        num_heads, key_size, value_size, dropout=attention_dropout,
        dtype=self.dtype_policy, name="self_attention")
    self.feed_forward = PositionwiseFeedForward(
        filter_size, relu_dropout=relu_dropout, dtype=self.dtype_policy,
        name="feed_forward")

  def call(self, x, bias=None, training=None):
    y = self.self_attention(self.residual_in(0, x), bias=bias,
                            training=training)
    x = self.residual_out(0, x, y, training)
    y = self.feed_forward(self.residual_in(1, x), training=training)
    return self.residual_out(1, x, y, training)

  def get_config(self):
    config = super().get_config()
    config.update(num_heads=self.num_heads, key_size=self.key_size,
                  value_size=self.value_size, filter_size=self.filter_size,
                  dropout=self.dropout,
                  attention_dropout=self.attention_dropout,
                  relu_dropout=self.relu_dropout,
                  norm_position=self.norm_position)
    return config


class Stack(keras.layers.Layer):
  """Shared part of the encoder and decoder stacks: positions, dropout on
  embeddings + positions, N layers, and the final LayerNorm of pre-norm.

  Args:
    layer_class: EncoderLayer or DecoderLayer.
    num_layers: N.
    pos: "timing" (sinusoids) or "emb" (learned positions).
    max_length: positions with a learned embedding (pos="emb" only).
    dropout: P_drop.
    **layer_kwargs: the layers' other arguments.
  """

  def __init__(self, layer_class, num_layers, pos="timing", max_length=1024,
               dropout=0.1, norm_position="post", layer_kwargs=None,
               **kwargs):
    super().__init__(**kwargs)
    self.num_layers = int(num_layers)
    self.pos = pos
    self.max_length = int(max_length)
    self.dropout = float(dropout)
    self.norm_position = norm_position
    self.layer_kwargs = dict(layer_kwargs or {})
    self.positions = positional_layer(pos, max_length, name="positions",
                                      dtype=self.dtype_policy)
    self.input_dropout = keras.layers.Dropout(self.dropout)
    self.layers = [
        layer_class(dropout=dropout, norm_position=norm_position,
                    dtype=self.dtype_policy, name=f"layer_{i}",
                    **self.layer_kwargs)
        for i in range(self.num_layers)]
    self.final_norm = (
        keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON,
                                        dtype=self.dtype_policy,
                                        name="final_layer_norm")
        if norm_position == "pre" else None)

  def embed_positions(self, x, offset=0, training=None):
    """Dropout(embeddings + positions) for x [batch, length, d_model]."""
    return self.input_dropout(self.positions(x, offset=offset),
                              training=training)

  def finish(self, x):
    return self.final_norm(x) if self.final_norm is not None else x

  def get_config(self):
    config = super().get_config()
    config.update(num_layers=self.num_layers, pos=self.pos,
                  max_length=self.max_length, dropout=self.dropout,
                  norm_position=self.norm_position, **self.layer_kwargs)
    return config


@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerEncoder(Stack):
  """The encoder stack.

  Args: ``num_layers``, ``pos``, ``max_length``, ``dropout``,
  ``norm_position`` as ``Stack``; the rest as ``EncoderLayer``.

  Call args:
    x: embedded inputs [batch, length, d_model] (already scaled).
    bias: padding mask [batch, 1, 1, length].
  Returns:
    the encoder output [batch, length, d_model].
  """

  def __init__(self, num_layers, num_heads, key_size, value_size,
               filter_size, attention_dropout=0.0, relu_dropout=0.0,
               **kwargs):
    super().__init__(
        EncoderLayer, num_layers,
        layer_kwargs=dict(num_heads=num_heads, key_size=key_size,
                          value_size=value_size, filter_size=filter_size,
                          attention_dropout=attention_dropout,
                          relu_dropout=relu_dropout),
        **kwargs)

  def call(self, x, bias=None, training=None):
    x = self.embed_positions(x, training=training)
    for layer in self.layers:
      x = layer(x, bias=bias, training=training)
    return self.finish(x)
