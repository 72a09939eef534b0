"""An exported SavedModel keeps the pre-softmax matrix transposed.

Decoding multiplies a few rows a step by W^T, [d_model, vocab], which
TensorFlow's CPU products want in memory rather than as a transposed
operand (``layers.embedding.TokenEmbedding.transposed``), so each search
forms it once. In a served model that is once a request: for the base
model with 32,000 pieces a 65 MB transpose, a tenth of a one-sentence
request's time. A SavedModel's weights never change, so the exporter
stores W^T as a variable of its own and the searches it traces read it:
the same values, so the same outputs; the SavedModel grows by W's size.

    stored = stored_transpose.transposes(model)       # once, eagerly
    with stored_transpose.reading(stored):
      ...trace the searches...                       # transposed() reads it
"""

import contextlib

from t2t_keras import kernels

_READING = []   # the {id(layer): variable} of each enclosing ``reading``


def transposes(model):
  """{id(layer): tf.Variable W^T} for the pre-softmax layer
  (``softmax_weights``) of ``model`` and of any model inside it (an
  ensemble's members), its value computed now; {} where the kernels are
  off. Track the variables on the saved object."""
  if not kernels.enabled():
    return {}
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  layers = {}
  for inner in model._flatten_layers(include_self=True, recursive=True):  # pylint: disable=protected-access
    softmax = getattr(inner, "softmax_weights", None)
    if hasattr(softmax, "transposed"):
      layers[id(softmax)] = softmax
  return {key: tf.Variable(layer.transposed(), trainable=False,
                           name=f"{layer.name}_transposed")
          for key, layer in layers.items()}


@contextlib.contextmanager
def reading(stored):
  """Within it, ``stored_for(layer)`` answers from ``stored`` (from
  ``transposes``)."""
  _READING.append(stored)
  try:
    yield
  finally:
    _READING.pop()


def stored_for(layer):
  """The stored W^T of ``layer`` (a tensor) inside ``reading``, else
  None."""
  for stored in reversed(_READING):
    if id(layer) in stored:
      return stored[id(layer)].read_value()
  return None
