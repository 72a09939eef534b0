"""Self-attention with relative position representations (Shaw, Uszkoreit
and Vaswani 2018), the attention of ``transformer_relative``:

    e_ij = x_i W^Q (x_j W^K + a^K_ij)^T / sqrt(d_k)
    z_i  = sum_j softmax_j(e_ij) (x_j W^V + a^V_ij)

with a^K_ij = w^K[clip(j - i, -k, k)] and a^V_ij = w^V[clip(j - i, -k, k)]:
one learned vector per clipped distance, shared by the heads.
"""

import keras
from keras import ops

from t2t_keras.layers.multi_head_attention import MultiHeadAttention


@keras.saving.register_keras_serializable(package="t2t_keras")
class RelativeMultiHeadAttention(MultiHeadAttention):
  """Multi-head self-attention with relative position keys and values.

  Args: as ``MultiHeadAttention``, and ``max_relative_position``: k, the
  largest distance with its own vectors (tensor2tensor's default 20).
  Call args and returns: as ``MultiHeadAttention``; cached decoding steps
  see the right distances because the hook gets the step as its offset.
  """

  def __init__(self, num_heads, key_size, value_size,
               max_relative_position=20, **kwargs):
    super().__init__(num_heads, key_size, value_size, **kwargs)
    self.max_relative_position = int(max_relative_position)

  def build(self, query_shape, memory_shape=None):
    super().build(query_shape, memory_shape)
    rows = 2 * self.max_relative_position + 1
    self.relative_keys = self.add_weight(
        name="relative_keys", shape=(rows, self.key_size),
        initializer=self.kernel_initializer)
    self.relative_values = self.add_weight(
        name="relative_values", shape=(rows, self.value_size),
        initializer=self.kernel_initializer)

  def attention_terms(self, queries, keys, offset):
    """[length_q, length_k, d] vectors of the clipped distances j - i."""
    query_length = queries.shape[2] or ops.shape(queries)[2]
    key_length = keys.shape[2] or ops.shape(keys)[2]
    k = self.max_relative_position
    distance = (ops.arange(key_length)[None, :] -
                (ops.arange(query_length) + offset)[:, None])
    index = ops.clip(distance, -k, k) + k
    keys = ops.cast(ops.take(self.relative_keys, index, axis=0),
                    self.compute_dtype)
    values = ops.cast(ops.take(self.relative_values, index, axis=0),
                      self.compute_dtype)
    return (lambda query: ops.einsum("bhqd,qkd->bhqk", query, keys),
            lambda weights: ops.einsum("bhqk,qkd->bhqd", weights, values))

  def get_config(self):
    config = super().get_config()
    config.update(max_relative_position=self.max_relative_position)
    return config
