"""Scaled dot-product attention, equation (1) of the paper.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
"""

import keras
from keras import ops

from t2t_keras.layers.dropout import Dropout


@keras.saving.register_keras_serializable(package="t2t_keras")
class ScaledDotProductAttention(keras.layers.Layer):
  """softmax(Q K^T / sqrt(d_k) + bias) V with dropout on the weights.

  Under a mixed-precision policy the products Q K^T and weights x V run in
  the compute dtype (bfloat16 or float16 inputs; the CPU and GPU kernels
  accumulate in float32); the logits are then cast to float32, and the
  additive mask and the softmax are computed in float32.

  Args:
    dropout: rate of dropout on the attention weights (training only).

  Call args:
    query: [batch, heads, length_q, d_k].
    key: [batch, heads, length_k, d_k].
    value: [batch, heads, length_k, d_v].
    bias: optional float additive mask broadcastable to
      [batch, heads, length_q, length_k] (see ``layers.masks``).
    extra_logits: optional hook for variants (relative positions): a
      function of the scaled query [batch, heads, length_q, d_k] returning a
      term broadcastable to the logits [batch, heads, length_q, length_k].
    extra_values: optional hook: a function of the attention weights
      [batch, heads, length_q, length_k] returning a term added to the
      output [batch, heads, length_q, d_v].
    training: bool, enables dropout.
    return_weights: if True also return the weights.

  Returns:
    [batch, heads, length_q, d_v], and with ``return_weights`` the float32
    weights [batch, heads, length_q, length_k].
  """

  def __init__(self, dropout=0.0, **kwargs):
    super().__init__(**kwargs)
    self.dropout = float(dropout)
    self._dropout_layer = Dropout(self.dropout)

  def call(self, query, key, value, bias=None, extra_logits=None,
           extra_values=None, training=None, return_weights=False):
    depth = query.shape[-1]   # d_k, static
    query = query * ops.cast(1.0 / float(depth) ** 0.5, query.dtype)
    # K^T as an operand flag, not a transposed copy (autodiff of an explicit
    # transpose adds two more a layer: about 2 ms of a base training step's
    # attention on the CPU).
    logits = ops.einsum("...qd,...kd->...qk", query, key)
    if extra_logits is not None:
      logits = logits + ops.cast(extra_logits(query), logits.dtype)
    logits = ops.cast(logits, "float32")
    if bias is not None:
      logits = logits + ops.cast(bias, "float32")
    weights = ops.softmax(logits, axis=-1)
    dropped = self._dropout_layer(weights, training=training)
    dropped = ops.cast(dropped, value.dtype)
    output = ops.matmul(dropped, value)
    if extra_values is not None:
      output = output + ops.cast(extra_values(dropped), output.dtype)
    if return_weights:
      return output, weights
    return output

  def get_config(self):
    config = super().get_config()
    config.update(dropout=self.dropout)
    return config
