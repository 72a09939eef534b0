"""The decoder layer and stack, section 3.1 of the paper. Incremental
decoding runs the same wiring (``DecoderLayer.wire``) a position at a
time, with sub-layers that read and write a cache
(``models.incremental``)."""

import keras

from t2t_keras.layers import masks
from t2t_keras.layers.block import TransformerBlock
from t2t_keras.layers.stack import Stack


@keras.saving.register_keras_serializable(package="t2t_keras")
class DecoderLayer(TransformerBlock):
  """Masked self-attention, encoder-decoder attention, feed-forward.

  Args: as ``TransformerBlock`` (h, d_k, d_v, d_ff, dropouts, norm_position,
  sub-layer specs), and ``cross_attention``: the spec of the
  encoder-decoder attention (None: ``MultiHeadAttention``).

  Call args:
    x: [batch, length, d_model].
    memory: encoder output [batch, source_length, d_model].
    self_bias: causal mask [1, 1, length, length] (full pass only).
    memory_bias: padding mask of the source [batch, 1, 1, source_length].
  Returns:
    [batch, length, d_model].
  """

  def __init__(self, num_heads, key_size, value_size, filter_size,
               cross_attention=None, **kwargs):
    super().__init__(3, num_heads, key_size, value_size, filter_size,
                     **kwargs)
    self.specs["cross_attention"] = cross_attention
    self.cross_attention = self.attention("encdec_attention",
                                          cross_attention)

  def wire(self, x, self_attend, cross_attend, feed_forward, training):
    """The block as section 3.1 wires it, the one place it is written:
    masked self-attention, encoder-decoder attention, then the
    feed-forward network, each of its normed input and behind its residual
    connection. The sub-layers come as functions ([batch, length, d_model]
    -> same), so the full pass (``call``) and a decoding step
    (``models.incremental.decoder_step``) differ only in them; a block
    variant overrides this and both follow."""
    x = self.residual_out(0, x, self_attend(self.residual_in(0, x)),
                          training)
    x = self.residual_out(1, x, cross_attend(self.residual_in(1, x)),
                          training)
    return self.residual_out(2, x, feed_forward(self.residual_in(2, x)),
                             training)

  def call(self, x, memory=None, self_bias=None, memory_bias=None,
           training=None):
    return self.wire(
        x,
        lambda q: self.self_attention(q, bias=self_bias, training=training),
        lambda q: self.cross_attention(q, memory, bias=memory_bias,
                                       training=training),
        lambda h: self.feed_forward(h, training=training), training)


@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerDecoder(Stack):
  """The decoder stack.

  Args: as ``Stack``; ``layer_options`` are ``DecoderLayer``'s.

  Call args (full pass, training and scoring):
    x: embedded, right-shifted targets [batch, length, d_model].
    memory: encoder output [batch, source_length, d_model].
    memory_bias: source padding mask [batch, 1, 1, source_length].
  Returns:
    [batch, length, d_model].
  """

  default_layer = DecoderLayer

  def call(self, x, memory, memory_bias=None, training=None):
    self_bias = masks.causal_bias(keras.ops.shape(x)[1])
    x = self.embed_positions(x, training=training)
    for layer in self.blocks:
      x = layer(x, memory, self_bias=self_bias, memory_bias=memory_bias,
                training=training)
    return self.finish(x)
