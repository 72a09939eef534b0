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
- With rounded weights (``kernels.quantize``: ``weights=int8|bfloat16``)
  every matrix a step reads (``step_layers``) and W^T are stored rounded,
  whatever the kernels: int8 as Q * s in float32 (TensorFlow has no int8
  product faster than float32 on CPUs: docs/performance.md), bfloat16 as
  bfloat16, multiplied in bfloat16 with a float32 result.

JAX on CPUs (``HeldProducts``): the decoder's matrices held in the layout
``kernels.kernel_layout`` chose, passed into the compiled search.

The same values as the layers' own products up to float32 rounding
(``tests/test_prepared.py``).
"""

import keras
import numpy as np
from keras import ops

from t2t_keras import kernels
from t2t_keras.errors import UserError
from t2t_keras.kernels import one_row as one_row_kernel
from t2t_keras.kernels import step_attention
from t2t_keras.kernels import quantize
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.feed_forward import PositionwiseFeedForward
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


def step_layers(model):
  """[(key, [Dense layers side by side])] a decoding step of ``model``
  multiplies by, bottom first, keyed as the products read them: per
  decoder layer the self-attention's [W^Q W^K W^V] ("stacked", where
  ``stackable``; else each "dense") and W^O, the encoder-decoder
  attention's W^Q and W^O, the feed-forward's W_1 and W_2."""
  found = []
  for block in model.decoder.blocks:
    attention = block.self_attention
    maps = attention.projections()
    stack = stackable(attention)
    if stack is not None:
      found.append((("stacked", attention), stack))
    else:
      found += [(("dense", maps[n]), [maps[n]])
                for n in ("query", "key", "value")]
    found.append((("dense", maps["output"]), [maps["output"]]))
    cross = block.cross_attention.projections()
    found += [(("dense", cross[n]), [cross[n]]) for n in ("query", "output")]
    if isinstance(block.feed_forward, PositionwiseFeedForward):
      found += [(("dense", d), [d]) for d in block.feed_forward.linear_maps()]
  return found


def _rounded(value, weights, dtype):
  """A matrix as ``weights`` stores it: bfloat16 as bfloat16, int8 as Q * s
  in ``dtype`` (the model's compute dtype)."""
  if weights == "bfloat16":
    return quantize.bfloat16(np.asarray(value))
  return quantize.rounded(np.asarray(value), weights).astype(dtype)


def _holds(layer, value):
  """Whether ``layer``'s kernel already holds ``value`` (its dtype, to
  float32 rounding): a model rounded in place needs no rounded copy."""
  kernel = ops.convert_to_numpy(layer.kernel)
  return kernel.dtype == value.dtype and np.allclose(kernel, value, rtol=1e-6,
                                                     atol=0)


def stored_matrices(model, weights="float32"):
  """{(kind, layer): tf.Variable}, their values computed now. Float32
  weights, where the kernels are on: W^T in the compute dtype of the
  pre-softmax ``TokenEmbedding`` ("softmax") and [W^Q W^K W^V] of each
  float32 self-attention ``stackable`` allows ("stacked"); {} where they
  are off. Rounded ``weights``: those and every other matrix of
  ``step_layers`` ("dense"), rounded (module docstring), but for a layer
  whose kernel holds its rounded values already (``round_weights``). Track
  the variables."""
  import tensorflow as tf
  rounding = quantize.check(weights) != "float32"
  if not (rounding or kernels.enabled()):
    return {}
  values = {}
  layer = model.softmax_weights
  if isinstance(layer, TokenEmbedding):
    transposed = ops.transpose(layer.embeddings)
    values[("softmax", layer)] = (
        f"{layer.name}_transposed",
        _rounded(transposed, weights, layer.compute_dtype) if rounding else
        ops.cast(transposed, layer.compute_dtype))
  for key, dense in step_layers(model):
    if key[0] == "dense" and not rounding:
      continue
    if key[0] == "stacked" and not (rounding or
                                     key[1].compute_dtype == "float32"):
      continue
    value = tf.concat([d.kernel for d in dense], axis=1)
    if rounding:
      value = _rounded(value, weights, key[1].compute_dtype)
      if key[0] == "dense" and _holds(dense[0], value):
        continue     # rounded in place already (``round_weights``)
    values[key] = (f"{key[1].name}_{key[0]}", value)
  return {key: tf.Variable(value, trainable=False, name=name)
          for key, (name, value) in values.items()}


def check_roundable(model, weights):
  """A one-line error where ``weights`` rounds a model (or an ensemble
  member) that steps through a ``decode_step`` of its own, whose matrices
  the rounding cannot reach; returns the models to round, [] for
  float32."""
  if quantize.check(weights) == "float32":
    return []
  members = getattr(model, "members", None) or [model]
  for member in members:
    if not walkable(member):
      raise UserError(f"weights={weights}: {type(member).__name__} decodes "
                      "through a decode_step of its own, whose matrices are "
                      "not rounded; decode it with weights=float32")
  return members


def round_weights(model, weights):
  """Rounds in place, as ``weights`` asks (``kernels.quantize``), every
  matrix of ``step_layers`` and the pre-softmax embedding (a column of W^T
  at a time: its rows), of ``model`` or each ensemble member: for a model
  loaded to decode only, so that its searches, forced scores and
  alignments read one rounded model (the embedding's lookups too). The
  prepared model's rounding of these values changes nothing more. Every
  member is checked (``check_roundable``) before any is changed."""
  for member in check_roundable(model, weights):
    for _, layers in step_layers(member):
      for dense in layers:
        dense.kernel.assign(quantize.rounded(
            ops.convert_to_numpy(dense.kernel), weights))
    embedding = member.softmax_weights
    if isinstance(embedding, TokenEmbedding):
      table = ops.convert_to_numpy(embedding.embeddings)
      embedding.embeddings.assign(quantize.rounded(table.T, weights).T)


def times(x, w, one_row):
  """x [..., d_in] times a stored matrix ``w`` [d_in, d_out] -> [...,
  d_out] in x's dtype: in bfloat16 with a float32 result where ``w`` is
  bfloat16 and x is not; on ``kernels.one_row``'s products where both are
  float32 and the kernels are on (``one_row``: its one-row branch)."""
  if w.dtype == "bfloat16" and x.dtype != "bfloat16":
    return ops.cast(apply_to_rows(
        lambda rows: ops.matmul(ops.cast(rows, "bfloat16"), w), x), x.dtype)
  if w.dtype != x.dtype:
    w = ops.cast(w, x.dtype)
  if x.dtype == "float32" and kernels.enabled():
    return one_row_kernel.product(x, w, one_row)
  return apply_to_rows(lambda rows: ops.matmul(rows, w), x)


class StepProducts(incremental.Products):
  """TensorFlow's searches' products (module docstring), and a JAX search's
  in Keras's layout (the kernels are off there).

  Args:
    softmax: {embedding layer: W^T [d_model, vocab]} read once a batch.
    stacked: {self-attention layer: ([W^Q W^K W^V], [b^Q b^K b^V])} read
      once a batch (``stacked_bias``), shared by both branches.
    one_row: the step's batch has one row (``kernels.one_row``'s branch).
    rounded: {Dense layer: its kernel rounded, [d_in, d_out]} read once a
      batch (``stored_matrices``' "dense"), or None.
  """

  def __init__(self, softmax, stacked, one_row, rounded=None):
    self._softmax = softmax
    self._stacked = stacked
    self._one_row = one_row
    self._rounded = rounded or {}

  def dense(self, layer):
    if layer in self._rounded:
      kernel = self._rounded[layer]
      return lambda x: finish(layer, times(x, kernel, self._one_row))
    if (not self._one_row or layer.compute_dtype != "float32" or
        getattr(layer, "quantization_mode", None)):
      return layer
    kernel = layer.kernel
    return lambda x: finish(layer, one_row_kernel.product(x, kernel, True))

  def stacked(self, attention):
    if attention not in self._stacked:
      return None
    kernel, bias = self._stacked[attention]
    return lambda x: times(x, kernel, self._one_row) + ops.cast(bias,
                                                                x.dtype)

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
    if transposed.dtype == x.dtype:    # float32 weights: as the layer does
      return ops.cast(apply_to_rows(
          lambda rows: ops.matmul(rows, transposed), x), "float32")
    return ops.cast(times(x, transposed, False), "float32")


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
