"""An exported SavedModel keeps the pre-softmax matrix transposed, and each
decoder self-attention's step kernels stacked.

Decoding multiplies a few rows a step by W^T, [d_model, vocab], which
TensorFlow's CPU products want in memory rather than as a transposed
operand (``layers.embedding.TokenEmbedding.transposed``), so each search
forms it once. In a served model that is once a request: for the base
model with 32,000 pieces a 65 MB transpose, a tenth of a one-sentence
request's time. A SavedModel's weights never change, so the exporter
stores W^T as a variable of its own and the searches it traces read it:
the same values, so the same outputs; the SavedModel grows by W's size.

A decoding step of a self-attention layer projects its one row a sentence
by W^Q, W^K and W^V: three products, each paying a kernel call's setup. The
exporter stores [W^Q W^K W^V], [d_model, h (2 d_k + d_v)], too, and the
step makes one product of it (``stacked_product_for``): a base model's
one-sentence request 0.324 -> 0.304 s greedy and 0.431 -> 0.411 s beam 4,
32 sentences beam 4 2.69 -> 2.54 s (medians of 2-4 rounds, one process, a
2-core AVX-512 EPYC); the same values up to float32 rounding. 18.9 MB
more for the base model.

    stored = stored_transpose.transposes(model)       # once, eagerly
    with stored_transpose.reading(stored):
      ...trace the searches...          # transposed() and the steps read it
"""

import contextlib

from t2t_keras import kernels
from t2t_keras.kernels import one_row

_READING = []   # the {id(layer): variable} of each enclosing ``reading``


def transposes(model):
  """{id(layer): tf.Variable} for ``model`` and any model inside it (an
  ensemble's members), their values computed now: W^T for the pre-softmax
  layer (``softmax_weights``), [W^Q W^K W^V] for each float32 decoder
  self-attention (``kernels.stepped_attentions``); {} where the kernels are
  off.
  Track the variables on the saved object."""
  if not kernels.enabled():
    return {}
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  values = {}
  for inner in model._flatten_layers(include_self=True, recursive=True):  # pylint: disable=protected-access
    softmax = getattr(inner, "softmax_weights", None)
    if hasattr(softmax, "transposed") and id(softmax) not in values:
      values[id(softmax)] = (f"{softmax.name}_transposed",
                             softmax.transposed())
  for layer, projections in kernels.stepped_attentions(model):
    if layer.compute_dtype == "float32":
      values[id(layer)] = (f"{layer.name}_stacked", tf.concat(
          [d.kernel for d in projections], axis=1))
  return {key: tf.Variable(value, trainable=False, name=name)
          for key, (name, value) in values.items()}


@contextlib.contextmanager
def reading(stored):
  """Within it, ``stored_for(layer)`` answers from ``stored`` (from
  ``transposes``)."""
  with kernels.pushed(_READING, stored):
    yield


def stacked_product_for(layer):
  """Inside ``reading``, for a self-attention ``layer`` whose stacked
  kernels are stored: x [..., d_model] -> x [W^Q W^K W^V] (no bias,
  ``kernels.one_row.product``); else None."""
  stacked = stored_for(layer)
  if stacked is None:
    return None
  return lambda x: one_row.product(x, stacked)


def stored_for(layer):
  """Inside ``reading``, what is stored for ``layer`` (a tensor): W^T of a
  pre-softmax layer, [W^Q W^K W^V] of a self-attention; else None."""
  for stored in reversed(_READING):
    if id(layer) in stored:
      return stored[id(layer)].read_value()
  return None
