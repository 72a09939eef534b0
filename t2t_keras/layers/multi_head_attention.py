"""Multi-head attention, section 3.2.2 of the paper, with a decoding cache.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

with W^Q, W^K in R^{d_model x d_k}, W^V in R^{d_model x d_v} per head and
W^O in R^{h d_v x d_model}. d_k and d_v are independent of d_model / h so
that Table 3 rows (A) and (B) can be built.

The incremental cache of decoder self-attention has a fixed shape (flax's
``cache_index``, keras-hub's ``CachedMultiHeadAttention``): keys and values
are allocated once at the output limit, step t writes its key and value at
position t, and the positions after t are masked out of step t's
attention. Every step's tensors have the same shapes, so a decoding loop
compiles with XLA and ``jax.jit``. Only core ops are used on TensorFlow
(a select, not XLA's dynamic-update-slice), so the loop exports to stock
TF Serving.
"""

import collections

import keras
from keras import ops

from t2t_keras.kernels import kernel_layout
from t2t_keras.kernels import stored_transpose
from t2t_keras.layers import attention_record
from t2t_keras.layers.dot_product_attention import ScaledDotProductAttention
from t2t_keras.layers.dense import Dense
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.layers.rows import apply_to_rows


class DecodingStep(collections.namedtuple("DecodingStep",
                                          ("index", "here", "bias"))):
  """A decoding step's position with what each self-attention layer needs
  from it, made once a step (``decoding_step``) and shared by the layers.

  Fields:
    index: scalar int, the position decoded.
    here: bool [1, 1, max_length, 1], True at ``index``: where the step's
      key and value are written.
    bias: [1, 1, 1, max_length] additive mask: 0 for the keys at positions
      0..index, NEG_INF after (not yet decoded).
  """


def decoding_step(index, max_length):
  """The ``DecodingStep`` of position ``index`` (scalar int) of a cache of
  ``max_length`` positions."""
  index = ops.convert_to_tensor(index, "int32")   # Keras's calls take
  positions = ops.arange(max_length)              # no mixed structures
  here = ops.reshape(ops.equal(positions, index), (1, 1, -1, 1))
  bias = ops.where(ops.greater(positions, index), NEG_INF, 0.0)
  return DecodingStep(index, here, ops.reshape(bias, (1, 1, 1, -1)))


def write_at(cache, update, step):
  """``cache`` [batch, heads, max_length, depth] with ``update`` [batch,
  heads, 1, depth] written at ``step`` (a ``DecodingStep``): same shape.
  On JAX a dynamic-update-slice (in place under ``jax.jit``); on
  TensorFlow a select, which XLA fuses and stock TF Serving runs."""
  update = ops.cast(update, cache.dtype)
  if keras.backend.backend() == "jax":
    return ops.slice_update(cache, (0, 0, step.index, 0), update)
  return ops.where(step.here, update, cache)


def _one_position(x, axis):
  """Whether ``x``'s ``axis`` (its positions) statically has length 1, as
  a decoding step's query has: moving the heads' axis past it is then a
  reshape, and the transposes (and the dynamic shape reads, a handful of
  graph ops each under TensorFlow) are left out of every step."""
  return x.shape[axis] == 1


@keras.saving.register_keras_serializable(package="t2t_keras")
class MultiHeadAttention(keras.layers.Layer):
  """Multi-head attention with per-head key size d_k and value size d_v.

  Args:
    num_heads: h.
    key_size: d_k, per head.
    value_size: d_v, per head.
    output_size: d_model of the output; defaults to the query's last dim.
    dropout: dropout rate on the attention weights.
    kernel_initializer: initializer of the projection matrices.

  Call args:
    query: [batch, length_q, d_model].
    memory: [batch, length_k, d_memory]; None for self-attention.
    bias: additive mask broadcastable to [batch, h, length_q, length_k].
    cache: for decoding. With ``step`` (self-attention): a dict of
      ``key`` [batch, h, max_length, d_k] and ``value`` [..., d_v] (from
      ``empty_cache``); the query must have length 1, its key and value
      are written at position ``step``, and it attends over positions 0 to
      ``step``. Without ``step`` (encoder-decoder attention): the
      dict from ``memory_cache``, used in place of ``memory``.
    step: the position being decoded: a scalar int, or the
      ``DecodingStep`` the decoder made once for all its layers.
    return_weights: also return the attention weights (inside
      ``attention_record.recording()`` they are recorded as well).

  Returns:
    output [batch, length_q, d_model]; then the weights
    [batch, h, length_q, length_k] if ``return_weights``; then the updated
    cache if ``cache`` was given.
  """

  def __init__(self, num_heads, key_size, value_size, output_size=None,
               dropout=0.0, kernel_initializer="glorot_uniform", **kwargs):
    super().__init__(**kwargs)
    self.num_heads = int(num_heads)
    self.key_size = int(key_size)
    self.value_size = int(value_size)
    self.output_size = output_size
    self.dropout = float(dropout)
    self.kernel_initializer = keras.initializers.get(kernel_initializer)
    dense = dict(kernel_initializer=self.kernel_initializer,
                 dtype=self.dtype_policy)
    h = self.num_heads
    self._query_dense = Dense(h * self.key_size, name="query", **dense)
    self._key_dense = Dense(h * self.key_size, name="key", **dense)
    self._value_dense = Dense(h * self.value_size, name="value", **dense)
    self._output_dense = None
    self._attention = ScaledDotProductAttention(
        self.dropout, dtype=self.dtype_policy, name="attention")

  def build(self, query_shape, memory_shape=None):
    memory_shape = memory_shape or query_shape
    out = self.output_size or query_shape[-1]
    self._output_dense = Dense(
        out, kernel_initializer=self.kernel_initializer,
        dtype=self.dtype_policy, name="output")
    self._query_dense.build(query_shape)
    self._key_dense.build(memory_shape)
    self._value_dense.build(memory_shape)
    self._output_dense.build(
        tuple(query_shape[:-1]) + (self.num_heads * self.value_size,))
    self.built = True

  def _project_heads(self, dense, x, depth):
    """``dense`` applied to ``x`` [batch, length, d], by head: [batch, h,
    length, depth]. A decoding step's single position needs no transpose
    (``_one_position``)."""
    if _one_position(x, 1):
      return apply_to_rows(dense, x, (-1, self.num_heads, 1, depth))
    length = x.shape[1] or ops.shape(x)[1]
    y = apply_to_rows(dense, x, (-1, length, self.num_heads, depth))
    return ops.transpose(y, (0, 2, 1, 3))

  def _merge_heads(self, x):
    """``x`` [batch, h, length, d_v] -> Concat(head_1, ..., head_h) W^O:
    [batch, length, d_model]."""
    length = x.shape[2] or ops.shape(x)[2]
    if not _one_position(x, 2):
      x = ops.transpose(x, (0, 2, 1, 3))   # [batch, length, h, d_v]
    rows = ops.reshape(x, (-1, self.num_heads * self.value_size))
    y = self._output_dense(rows)
    return ops.reshape(y, (-1, length, y.shape[-1]))

  def queries(self, query, offset):
    """Q W^Q by head: ``query`` [batch, length, d_model] at positions
    ``offset``, ... -> [batch, h, length, d_k]. A hook for variants that
    transform queries by position (rotary positions)."""
    del offset
    return self._project_heads(self._query_dense, query, self.key_size)

  def keys_values(self, memory, offset):
    """K W^K and V W^V by head of ``memory`` [batch, length, d] at
    positions ``offset``, ...: ``key`` [batch, h, length, d_k] and ``value``
    [batch, h, length, d_v]. A hook like ``queries``."""
    del offset
    return {
        "key": self._project_heads(self._key_dense, memory, self.key_size),
        "value": self._project_heads(self._value_dense, memory,
                                   self.value_size),
    }

  def memory_cache(self, memory):
    """Keys and values of ``memory`` [batch, length, d], computed once
    (``keys_values`` from position 0)."""
    return self.keys_values(memory, 0)

  def empty_cache(self, batch_size, max_length):
    """The self-attention cache before step 0, for at most ``max_length``
    steps: zeros ``key`` [batch_size, h, max_length, d_k] and ``value``
    [batch_size, h, max_length, d_v]."""
    dtype = self.compute_dtype
    shape = (batch_size, self.num_heads, max_length)
    return {"key": ops.zeros(shape + (self.key_size,), dtype),
            "value": ops.zeros(shape + (self.value_size,), dtype)}

  def _projections(self):
    return (self._query_dense, self._key_dense, self._value_dense)

  def step_projections(self):
    """The query, key and value ``Dense`` layers, whose products a
    decoding step of this layer may make as one (``kernels.kernel_layout``:
    JAX searches on CPUs; ``kernels.stored_transpose``: SavedModels and
    t2t-decoder), or None where a variant transforms what they project
    (rotary positions override ``queries`` and ``keys_values``) or they
    have no bias or an activation."""
    base = MultiHeadAttention
    layers = self._projections()
    if (type(self).queries is not base.queries or
        type(self).keys_values is not base.keys_values or
        any(d.bias is None or d.activation is not keras.activations.linear
            for d in layers)):
      return None
    return layers

  def _step_projections_fused(self, query, fused):
    """``queries`` and ``keys_values`` of a step's ``query`` [batch, 1,
    d_model] as one product, ``fused(query)`` = query [W^Q W^K W^V],
    [batch, 1, h (2 d_k + d_v)]: [batch, h, 1, d_k] and {"key": [batch, h,
    1, d_k], "value": [batch, h, 1, d_v]}. A step multiplies one row a
    sentence, where one product of three matrices' rows is faster than
    three."""
    bias = ops.concatenate([d.bias for d in self._projections()], axis=0)
    y = fused(query) + bias
    h, dk = self.num_heads, self.key_size
    q, k, v = ops.split(y, (h * dk, 2 * h * dk), axis=-1)
    return (ops.reshape(q, (-1, h, 1, dk)),
            {"key": ops.reshape(k, (-1, h, 1, dk)),
             "value": ops.reshape(v, (-1, h, 1, self.value_size))})

  def attention_terms(self, queries, keys, offset):
    """Hook for variants of self-attention (relative positions): the
    ``extra_logits`` and ``extra_values`` functions that
    ``ScaledDotProductAttention`` adds, for ``queries`` [batch, h,
    length_q, d_k] at positions ``offset``, ..., ``offset + length_q - 1``
    over ``keys`` [batch, h, length_k, d_k] at 0, ..., ``length_k - 1``.
    None, None here (the paper's attention)."""
    del queries, keys, offset
    return None, None

  def call(self, query, memory=None, bias=None, cache=None, step=None,
           training=None, return_weights=False):
    if step is not None and not isinstance(step, DecodingStep):
      step = decoding_step(step, cache["key"].shape[2] or
                           ops.shape(cache["key"])[2])
    offset = 0 if step is None else step.index
    fused = None if step is None else (
        kernel_layout.fused_product_for(self) or
        stored_transpose.stacked_product_for(self))
    if fused is not None:   # a decoder's self-attention step: JAX on CPUs,
      # or a SavedModel or t2t-decoder holding the stacked kernels
      q, new = self._step_projections_fused(query, fused)
    else:
      q = self.queries(query, offset)
    if cache is not None and step is not None:   # self-attention, step by step
      new = new if fused is not None else self.keys_values(query, offset)
      cache = {name: write_at(cache[name], new[name], step)
               for name in ("key", "value")}
      kv = cache
      bias = step.bias if bias is None else bias + step.bias
    elif cache is not None:                       # memory computed once
      kv = cache
    else:
      kv = self.keys_values(query if memory is None else memory, 0)
    extra_logits = extra_values = None
    if memory is None and (cache is None or step is not None):
      extra_logits, extra_values = self.attention_terms(q, kv["key"],
                                                        offset)
    context, weights = self._attention(
        q, kv["key"], kv["value"], bias=bias, extra_logits=extra_logits,
        extra_values=extra_values, training=training, return_weights=True)
    if attention_record.is_recording():
      attention_record.record(self, weights)
    output = self._merge_heads(context)
    results = (output,)
    if return_weights:
      results += (weights,)
    if cache is not None:
      results += (cache,)
    return results[0] if len(results) == 1 else results

  def get_config(self):
    config = super().get_config()
    config.update(
        num_heads=self.num_heads, key_size=self.key_size,
        value_size=self.value_size, output_size=self.output_size,
        dropout=self.dropout,
        kernel_initializer=keras.initializers.serialize(
            self.kernel_initializer))
    return config
