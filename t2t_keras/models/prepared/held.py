"""Which of a model's matrices a JAX search holds in a layout for few rows
(``kernels.kernel_layout``): those a decoding step multiplies by. Per
decoder layer: the self-attention's [W^Q W^K W^V] (or each, where
``products.stackable`` refuses) and W^O, the encoder-decoder attention's
W^Q and W^O, the feed-forward's W_1 and W_2; and the pre-softmax matrix,
packed. The encoder and the encoder-decoder keys and values, computed once
a batch over many rows, read Keras's layout.

    held = held_matrices(model, variables)     # None where it is off
    held = held_matrices(model, variables, "int8")   # held rounded
    arrays = held.outside(values, layout)      # before the jitted call
    products = held.products(arrays, layout)   # inside it, for
    prepare_for_decoding(model, held=products)
"""

from t2t_keras.kernels import kernel_layout
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.models.prepared.products import step_layers, walkable


def _walked(model):
  """The models whose steps read the held matrices: ``model``, or an
  ensemble's members."""
  members = getattr(model, "members", None)
  found = [model] if members is None else list(members)
  return [m for m in found if walkable(m)]


def held_matrices(model, variables, weights="float32"):
  """A ``kernel_layout.HeldMatrices`` of ``model``'s step matrices among
  ``variables`` (the list whose values the search receives), keyed as
  ``products.HeldProducts`` reads them, rounded as ``weights`` asks
  (``kernels.quantize``); None where no step matrix is among them, or
  ``kernel_layout`` is off and the weights are float32."""
  probing = kernel_layout.enabled()
  if not probing and weights == "float32":
    return None
  position = {id(v): i for i, v in enumerate(variables)}
  matrices, float32 = {}, True
  for member in _walked(model):
    float32 = float32 and member.compute_dtype == "float32"
    for key, layers in step_layers(member):
      kernels = [d.kernel for d in layers]
      if all(id(k) in position and len(k.shape) == 2 for k in kernels):
        matrices[key] = ([position[id(k)] for k in kernels], False, False)
    embedding = member.softmax_weights
    if (isinstance(embedding, TokenEmbedding) and
        id(embedding.embeddings) in position):
      matrices[("softmax", embedding)] = (
          [position[id(embedding.embeddings)]], True, True)
  if not matrices:
    return None
  return kernel_layout.HeldMatrices(
      matrices, [tuple(v.shape) for v in variables], float32, weights,
      probing)
