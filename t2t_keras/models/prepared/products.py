"""How a model prepared for decoding multiplies by its weights: the
``models.incremental.Products`` each backend's searches read.

TensorFlow (``StepProducts``):
- The pre-softmax product multiplies by W^T [d_model, vocab] formed before
  the steps (a product with W^T computed inside it is a MatMul with
  transpose_b, which oneDNN runs 1.5x slower at beam search's 128 rows and
  2.8x slower at greedy search's 32 than with W^T in memory; CPU, float32):
  once a batch, or, where the weights no longer change (t2t-decoder, a
  SavedModel), a variable made once (``stored_matrices``): for the base
  model with 32,000 pieces a 65 MB transpose saved, a tenth of a
  one-sentence request's time; the SavedModel grows by W's size.
- With fixed weights each float32 decoder self-attention's step multiplies
  its row by [W^Q W^K W^V] stored the same way: one product instead of
  three, each paying a kernel call's setup (a base model's one-sentence
  request 0.324 -> 0.304 s greedy and 0.431 -> 0.411 s beam 4, 32 sentences
  beam 4 2.69 -> 2.54 s; 18.9 MB more for the base model).
- A step of one row a batch multiplies on Eigen's kernels
  (``kernels.one_row``), and a float32 step's attention is equation (1) on
  Eigen's kernels (``kernels.step_attention``), where the kernels are on.

JAX on CPUs (``HeldProducts``): the decoder's matrices held in the layout
``kernels.kernel_layout`` chose, passed into the compiled search.

The same values as the layers' own products up to float32 rounding
(``tests/test_prepared.py``).
"""

import keras
from keras import ops

from t2t_keras import kernels
from t2t_keras.kernels import one_row as one_row_kernel
from t2t_keras.kernels import step_attention
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.rows import apply_to_rows
from t2t_keras.models import incremental
from t2t_keras.models.transformer import Transformer


def walkable(model):
  """Whether ``model`` steps through ``Transformer.decode_step`` with
  products (a variant that overrides it decodes through its own)."""
  return (isinstance(model, Transformer) and
          type(model).decode_step is Transformer.decode_step)


def stackable(attention):
  """The query, key and value ``Dense`` layers of a self-attention layer
  whose step can make their products as one: each with a bias and no
  activation; else None."""
  maps = attention.projections()
  layers = [maps[name] for name in ("query", "key", "value")]
  if any(d.bias is None or d.activation is not keras.activations.linear
         for d in layers):
    return None
  return layers


def finish(layer, y):
  """x W (``y``) -> x W + b and the ``Dense`` layer's activation, as
  ``keras.layers.Dense`` computes them."""
  if layer.bias is not None:
    y = ops.add(y, layer.bias)
  if layer.activation is not None:
    y = layer.activation(y)
  return y


def stacked_bias(attention):
  """[b^Q b^K b^V]: [h (2 d_k + d_v)]."""
  maps = attention.projections()
  return ops.concatenate([maps[n].bias for n in ("query", "key", "value")],
                         axis=0)


def stored_matrices(softmax_layers, attentions):
  """{(kind, layer): tf.Variable}, their values computed now: W^T in the
  compute dtype of each pre-softmax ``TokenEmbedding`` ("softmax"), and
  [W^Q W^K W^V] of each float32 self-attention that ``stackable`` allows
  ("stacked"); {} where the kernels are off. Track the variables."""
  if not kernels.enabled():
    return {}
  import tensorflow as tf
  values = {}
  for layer in softmax_layers:
    if isinstance(layer, TokenEmbedding):
      values[("softmax", layer)] = (f"{layer.name}_transposed", ops.transpose(
          ops.cast(layer.embeddings, layer.compute_dtype)))
  for layer in attentions:
    projections = stackable(layer)
    if projections and layer.compute_dtype == "float32":
      values[("stacked", layer)] = (f"{layer.name}_stacked", tf.concat(
          [d.kernel for d in projections], axis=1))
  return {key: tf.Variable(value, trainable=False, name=name)
          for key, (name, value) in values.items()}


class StepProducts(incremental.Products):
  """TensorFlow's searches' products (module docstring), and a JAX search's
  in Keras's layout (the kernels are off there).

  Args:
    softmax: {embedding layer: W^T [d_model, vocab]} read once a batch.
    stacked: {self-attention layer: ([W^Q W^K W^V], [b^Q b^K b^V])} read
      once a batch (``stacked_bias``), shared by both branches.
    one_row: the step's batch has one row (``kernels.one_row``'s branch).
  """

  def __init__(self, softmax, stacked, one_row):
    self._softmax = softmax
    self._stacked = stacked
    self._one_row = one_row

  def dense(self, layer):
    if (not self._one_row or layer.compute_dtype != "float32" or
        getattr(layer, "quantization_mode", None)):
      return layer
    kernel = layer.kernel
    return lambda x: finish(layer, one_row_kernel.product(x, kernel, True))

  def stacked(self, attention):
    if attention not in self._stacked:
      return None
    kernel, bias = self._stacked[attention]
    return lambda x: one_row_kernel.product(x, kernel, self._one_row) + bias

  def attend(self, attention, queries, keys, values, bias, extra_logits,
             extra_values):
    if not step_attention.fits(queries, values, False):
      return super().attend(attention, queries, keys, values, bias,
                            extra_logits, extra_values)
    # The layer's scaling (ScaledDotProductAttention), then equation (1).
    scaled = queries * ops.cast(1.0 / float(queries.shape[-1]) ** 0.5,
                                queries.dtype)
    return step_attention.attention(scaled, keys, values, bias,
                                    extra_logits, extra_values)[0]

  def logits(self, embedding, x):
    transposed = self._softmax.get(embedding)
    if transposed is None:
      return super().logits(embedding, x)
    return ops.cast(apply_to_rows(lambda rows: ops.matmul(rows, transposed),
                                  x), "float32")


class HeldProducts(incremental.Products):
  """A JAX search's products of the matrices ``kernels.kernel_layout``
  holds.

  Args:
    held: {("dense", layer) | ("stacked", attention) | ("softmax",
      embedding): x -> x M}, from ``HeldMatrices.products``.
    softmax: {embedding layer: W^T} read once a batch (Keras's layout),
      for the pre-softmax products ``held`` lacks.
  """

  def __init__(self, held, softmax):
    self._held = held
    self._softmax = softmax

  def dense(self, layer):
    product = self._held.get(("dense", layer))
    if product is None:
      return layer
    return lambda x: finish(layer, product(x))

  def stacked(self, attention):
    product = self._held.get(("stacked", attention))
    if product is None:
      return None
    bias = stacked_bias(attention)
    return lambda x: product(x) + bias

  def logits(self, embedding, x):
    product = self._held.get(("softmax", embedding))
    if product is None and embedding in self._softmax:
      transposed = self._softmax[embedding]
      product = lambda rows: ops.matmul(rows, transposed)
    if product is None:
      return super().logits(embedding, x)
    return ops.cast(apply_to_rows(product, x), "float32")
