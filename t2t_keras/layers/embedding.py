"""Token embeddings and the pre-softmax projection, section 3.4 of the paper.

One ``TokenEmbedding`` can serve as the source embedding, the target
embedding and the pre-softmax linear transformation at once (the paper shares
all three); embedded vectors are multiplied by sqrt(d_model).
"""

import keras
from keras import ops

from t2t_keras.layers.rows import apply_to_rows


@keras.saving.register_keras_serializable(package="t2t_keras")
class TokenEmbedding(keras.layers.Layer):
  """A [vocab_size, d_model] matrix used both ways.

  Args:
    vocab_size: number of token ids.
    hidden_size: d_model.
    initializer: defaults to normal(0, d_model^-0.5), so that scaled
      embeddings have unit variance.

  ``call(ids)``: int [batch, length] -> [batch, length, d_model], the rows
  times sqrt(d_model).
  ``call(x, reverse=True)``: [batch, length, d_model] -> float32
  [batch, length, vocab_size], ``x W^T`` (computed in the compute dtype,
  returned in float32 for a stable softmax and loss; with ``float32=False``
  in the compute dtype, for a loss that computes in float32 itself).
  """

  def __init__(self, vocab_size, hidden_size, initializer=None, **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = int(vocab_size)
    self.hidden_size = int(hidden_size)
    if initializer is None:
      initializer = keras.initializers.RandomNormal(
          stddev=self.hidden_size ** -0.5)
    self.initializer = keras.initializers.get(initializer)

  def build(self, input_shape=None):
    self.embeddings = self.add_weight(
        name="embeddings", shape=(self.vocab_size, self.hidden_size),
        initializer=self.initializer)
    self.built = True

  def call(self, inputs, reverse=False, float32=True):
    if reverse:
      weights = ops.cast(self.embeddings, inputs.dtype)
      # 2-D, so that its gradient is two plain products.
      logits = apply_to_rows(
          lambda rows: ops.einsum("nd,vd->nv", rows, weights), inputs)
      return ops.cast(logits, "float32") if float32 else logits
    ids = inputs
    vectors = ops.take(self.embeddings, ops.cast(ids, "int32"), axis=0)
    vectors = ops.cast(vectors, self.compute_dtype)
    return vectors * ops.cast(self.hidden_size ** 0.5, self.compute_dtype)

  def get_config(self):
    config = super().get_config()
    config.update(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                  initializer=keras.initializers.serialize(self.initializer))
    return config
