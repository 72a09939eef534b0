"""The decoder layer and stack, section 3.1 of the paper, with the
incremental decoding path used by beam search."""

import keras

from t2t_keras.layers import masks
from t2t_keras.layers.block import TransformerBlock
from t2t_keras.layers.multi_head_attention import decoding_step
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
    cache: for one decoding step: {"self": {"key", "value"}, "cross":
      {"key", "value"}} (see ``TransformerDecoder.init_cache``).
    step: the position decoded, with ``cache``; then ``x`` has length 1.
  Returns:
    [batch, length, d_model]; with ``cache``, also the updated cache.
  """

  def __init__(self, num_heads, key_size, value_size, filter_size,
               cross_attention=None, **kwargs):
    super().__init__(3, num_heads, key_size, value_size, filter_size,
                     **kwargs)
    self.specs["cross_attention"] = cross_attention
    self.cross_attention = self.attention("encdec_attention",
                                          cross_attention)

  def call(self, x, memory=None, self_bias=None, memory_bias=None,
           cache=None, step=None, training=None):
    query = self.residual_in(0, x)
    if cache is None:
      y = self.self_attention(query, bias=self_bias, training=training)
    else:
      y, self_cache = self.self_attention(query, cache=cache["self"],
                                          step=step, training=training)
    x = self.residual_out(0, x, y, training)
    query = self.residual_in(1, x)
    if cache is None:
      y = self.cross_attention(query, memory, bias=memory_bias,
                               training=training)
    else:
      y, _ = self.cross_attention(query, bias=memory_bias,
                                  cache=cache["cross"], training=training)
    x = self.residual_out(1, x, y, training)
    y = self.feed_forward(self.residual_in(2, x), training=training)
    x = self.residual_out(2, x, y, training)
    if cache is None:
      return x
    return x, {"self": self_cache, "cross": cache["cross"]}


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

  Incremental decoding: ``init_cache`` once per batch, then ``step`` for
  positions 0, 1, ...; each step equals the full pass at that position.
  """

  default_layer = DecoderLayer

  def call(self, x, memory, memory_bias=None, training=None):
    self_bias = masks.causal_bias(keras.ops.shape(x)[1])
    x = self.embed_positions(x, training=training)
    for layer in self.blocks:
      x = layer(x, memory, self_bias=self_bias, memory_bias=memory_bias,
                training=training)
    return self.finish(x)

  def init_cache(self, memory, max_length):
    """The decoding cache: per layer, a self-attention cache of
    ``max_length`` positions (written one a step) and the encoder-decoder
    keys and values of ``memory`` [batch, source_length, d_model], computed
    once."""
    batch = keras.ops.shape(memory)[0]
    return [{"self": layer.self_attention.empty_cache(batch, max_length),
             "cross": layer.cross_attention.memory_cache(memory)}
            for layer in self.blocks]

  def reorder_cache(self, cache, indices):
    """The cache with its self-attention entries gathered: row i of the
    result is row ``indices[i]`` (int [rows]) of ``cache``. Beam search
    calls this after each step. The encoder-decoder keys and values are the
    same for every beam of a sentence, so they are not copied."""
    return [dict(layer, self={name: keras.ops.take(t, indices, axis=0)
                              for name, t in layer["self"].items()})
            for layer in cache]

  def step(self, x, step, cache, memory_bias=None, training=None):
    """One incremental step.

    Args:
      x: the embedded previous token [batch, 1, d_model].
      step: scalar int, its position.
      cache: from ``init_cache`` or the previous step.
    Returns:
      ([batch, 1, d_model], the updated cache).
    """
    x = self.embed_positions(x, offset=step, training=training)
    keys = cache[0]["self"]["key"]      # [batch, h, max_length, d_k]
    # The step's write position and mask, once for every layer.
    step = decoding_step(step, keys.shape[2] or keras.ops.shape(keys)[2])
    new_cache = []
    for layer, layer_cache in zip(self.blocks, cache):
      x, layer_cache = layer(x, memory_bias=memory_bias, cache=layer_cache,
                             step=step, training=training)
      new_cache.append(layer_cache)
    return self.finish(x), new_cache
