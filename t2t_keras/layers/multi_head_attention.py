"""Multi-head attention, section 3.2.2 of the paper.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O
    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

with W^Q, W^K in R^{d_model x d_k}, W^V in R^{d_model x d_v} per head and
W^O in R^{h d_v x d_model}. d_k and d_v are independent of d_model / h so
that Table 3 rows (A) and (B) can be built.

Variants change a part through hooks (``positioned``: rotary positions;
``attention_terms``: relative positions); incremental decoding
(``models.incremental``) calls the same parts a position at a time.
"""

import keras
from keras import ops

from t2t_keras.layers import attention_record
from t2t_keras.layers.dot_product_attention import ScaledDotProductAttention
from t2t_keras.layers.dense import Dense
from t2t_keras.layers.rows import apply_to_rows


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
    return_weights: also return the attention weights (inside
      ``attention_record.recording()`` they are recorded as well).

  Returns:
    output [batch, length_q, d_model]; then the weights
    [batch, h, length_q, length_k] if ``return_weights``.
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

  def projections(self):
    """The linear maps: {"query": W^Q, "key": W^K, "value": W^V, "output":
    W^O}, each a ``Dense`` layer over all heads at once."""
    return {"query": self._query_dense, "key": self._key_dense,
            "value": self._value_dense, "output": self._output_dense}

  def project_heads(self, dense, x, depth):
    """``dense`` (a Dense layer or a function of [rows, d] rows) applied to
    ``x`` [batch, length, d], by head: [batch, h, length, depth]. A decoding
    step's single position needs no transpose (``_one_position``)."""
    if _one_position(x, 1):
      return apply_to_rows(dense, x, (-1, self.num_heads, 1, depth))
    length = x.shape[1] or ops.shape(x)[1]
    y = apply_to_rows(dense, x, (-1, length, self.num_heads, depth))
    return ops.transpose(y, (0, 2, 1, 3))

  def merge_heads(self, x, output=None):
    """``x`` [batch, h, length, d_v] -> Concat(head_1, ..., head_h) W^O:
    [batch, length, d_model]; ``output``: what multiplies by W^O (default
    the layer's own ``Dense``)."""
    length = x.shape[2] or ops.shape(x)[2]
    if not _one_position(x, 2):
      x = ops.transpose(x, (0, 2, 1, 3))   # [batch, length, h, d_v]
    rows = ops.reshape(x, (-1, self.num_heads * self.value_size))
    y = (output or self._output_dense)(rows)
    return ops.reshape(y, (-1, length, y.shape[-1]))

  def positioned(self, kind, heads, offset):
    """Hook for variants that transform queries or keys by position
    (rotary positions): ``heads`` [batch, h, length, depth], the projected
    "query" or "key" at positions ``offset``, ``offset + 1``, ... -> the same
    shape. Unchanged here (the paper adds positions to the embeddings)."""
    del kind, offset
    return heads

  def queries(self, query, offset):
    """Q W^Q by head: ``query`` [batch, length, d_model] at positions
    ``offset``, ... -> [batch, h, length, d_k]."""
    q = self.project_heads(self._query_dense, query, self.key_size)
    return self.positioned("query", q, offset)

  def keys_values(self, memory, offset):
    """K W^K and V W^V by head of ``memory`` [batch, length, d] at
    positions ``offset``, ...: ``key`` [batch, h, length, d_k] and ``value``
    [batch, h, length, d_v]."""
    key = self.project_heads(self._key_dense, memory, self.key_size)
    return {"key": self.positioned("key", key, offset),
            "value": self.project_heads(self._value_dense, memory,
                                        self.value_size)}

  def attention_terms(self, queries, keys, offset):
    """Hook for variants of self-attention (relative positions): the
    ``extra_logits`` and ``extra_values`` functions that
    ``ScaledDotProductAttention`` adds, for ``queries`` [batch, h,
    length_q, d_k] at positions ``offset``, ..., ``offset + length_q - 1``
    over ``keys`` [batch, h, length_k, d_k] at 0, ..., ``length_k - 1``.
    None, None here (the paper's attention)."""
    del queries, keys, offset
    return None, None

  def attend(self, queries, keys, values, bias=None, extra_logits=None,
             extra_values=None, training=None):
    """Equation (1) by head (``ScaledDotProductAttention``): (context
    [batch, h, length_q, d_v], float32 weights [batch, h, length_q,
    length_k])."""
    return self._attention(
        queries, keys, values, bias=bias, extra_logits=extra_logits,
        extra_values=extra_values, training=training, return_weights=True)

  def call(self, query, memory=None, bias=None, training=None,
           return_weights=False):
    q = self.queries(query, 0)
    kv = self.keys_values(query if memory is None else memory, 0)
    terms = (self.attention_terms(q, kv["key"], 0) if memory is None
             else (None, None))
    context, weights = self.attend(q, kv["key"], kv["value"], bias, *terms,
                                   training=training)
    if attention_record.is_recording():
      attention_record.record(self, weights)
    output = self.merge_heads(context)
    return (output, weights) if return_weights else output

  def get_config(self):
    config = super().get_config()
    config.update(
        num_heads=self.num_heads, key_size=self.key_size,
        value_size=self.value_size, output_size=self.output_size,
        dropout=self.dropout,
        kernel_initializer=keras.initializers.serialize(
            self.kernel_initializer))
    return config
