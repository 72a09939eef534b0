"""Token embeddings and the pre-softmax projection, section 3.4 of the paper.

One ``TokenEmbedding`` can serve as the source embedding, the target
embedding and the pre-softmax linear transformation at once (the paper shares
all three); embedded vectors are multiplied by sqrt(d_model).
"""

import keras
from keras import ops

from t2t_keras.kernels import kernel_layout
from t2t_keras.kernels import stored_transpose
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
  ``call(x, reverse=True, transposed=transposed())``: the same product with
  ``W^T`` formed beforehand, for many products of few rows (decoding).
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

  def transposed(self):
    """W^T [d_model, vocab_size] in the compute dtype.

    A product with W^T computed inside the product is a MatMul with
    transpose_b (TensorFlow's graph rewriter folds any transpose into it),
    which oneDNN runs 1.5x slower at beam search's 128 rows and 2.8x slower
    at greedy search's 32 than the same product with W^T in memory (CPU,
    fp32); at training's thousands of rows both are equal. So decoding
    forms W^T (and its cast) once a batch and passes it to ``call``; an
    exported SavedModel stores it (``kernels.stored_transpose``). Inside a
    JAX search on CPUs (``kernels.kernel_layout``) it is None: ``call``
    multiplies by the matrix that layout holds (packed), or by W
    [vocab_size, d_model] itself, against which XLA's few-row products are
    faster (transposed).
    """
    if kernel_layout.active():
      return None
    stored = stored_transpose.stored_for(self)
    if stored is not None:
      return stored
    return ops.transpose(ops.cast(self.embeddings, self.compute_dtype))

  def call(self, inputs, reverse=False, transposed=None, float32=True):
    if reverse:
      held = kernel_layout.product_for(self)   # packed, in a JAX search
      if held is not None:
        product = held
      elif transposed is None:
        weights = ops.cast(self.embeddings, inputs.dtype)
        # 2-D, so that its gradient is two plain products.
        product = lambda rows: ops.einsum("nd,vd->nv", rows, weights)  # pylint: disable=unnecessary-lambda-assignment
      else:
        product = lambda rows: ops.matmul(rows, transposed)  # pylint: disable=unnecessary-lambda-assignment
      logits = apply_to_rows(product, inputs)
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
