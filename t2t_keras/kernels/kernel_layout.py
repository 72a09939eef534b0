"""The JAX searches hold each linear map's W in a layout for few rows.

A decoding step multiplies one row a hypothesis by every decoder matrix.
On CPUs XLA's dot runs that few-row product slower against W as Keras
stores it, [d_in, d_out], than it could: it packs W into panels on every
call. So ``JaxSearch`` passes the kernels to its compiled search in one of
two held layouts, made once for a given set of weights, and inside
``reading(...)`` the layers multiply by them (``product_for``):

  "packed"      each kernel as ``rows_product``'s panels, [ceil(d_out / P),
                d_in, P], multiplied by its FFI handler, which reads each
                weight once (the base model's chain of a step's 49 products,
                ``benchmarks/step_floor.py``, 1.2-1.3x faster than XLA's dot
                at one row and 2.2-2.5x at four on an AVX-512 EPYC). The
                pre-softmax product reads the embedding packed as well
                ([d_model, vocab] in panels). Where ``rows_product`` builds
                and the model computes in float32.
  "transposed"  each kernel as [d_out, d_in], multiplied as
                ``einsum("...i,oi->...o")`` (one product with those
                dimension numbers, no transpose op); the pre-softmax
                product reads the embedding [vocab, d_model] as it is
                (``TokenEmbedding.transposed`` is None). 1.1-1.2x faster
                than Keras's layout at one row and 1.3-1.7x at four on an
                EPYC without AVX-512, slower at four on one with it.

In both, a decoder self-attention's step multiplies its row by W^Q, W^K and
W^V stacked, [W^Q W^K W^V] (``fused_product_for``;
``kernels.stepped_attentions`` says which): one product instead of three (a
one-sentence greedy search 1.08x and 1.10x faster, transposed layout).
Which layout a search reads, Keras's among them, is measured for its rows a
step (``layout_probe``).

    layout = layout_for(model, variables)        # None where it is off
    arguments = layout.outside(values, name)     # before the jitted call
    with layout.reading(arguments, name):        # inside it
      values = layout.inside(arguments, name)    # for the StatelessScope

On where Keras runs on JAX and its devices are CPUs (the only place it was
measured), unless ``T2T_KERAS_KERNELS=0``.
"""

import contextlib
import os

import keras
from keras import ops

from t2t_keras import kernels
from t2t_keras.kernels import layout_probe
from t2t_keras.kernels import rows_product

LAYOUTS = ("packed", "transposed")
_READING = []   # each enclosing ``reading``'s {key: product function}


def enabled():
  """Whether JAX searches take held kernels (module docstring)."""
  if os.environ.get("T2T_KERAS_KERNELS", "") == "0":
    return False
  if keras.backend.backend() != "jax":
    return False
  import jax  # pylint: disable=g-import-not-at-top
  return jax.devices()[0].platform == "cpu"


class KernelLayout:
  """Which of ``variables`` are Dense kernels and the pre-softmax matrix,
  and their held layouts.

  Args:
    model: the model whose ``keras.layers.Dense`` layers (``layers.dense``
      among them), stepped self-attention layers and ``softmax_weights``
      are looked for.
    variables: the list whose values a search receives, in order.
  """

  def __init__(self, model, variables):
    position = {id(v): i for i, v in enumerate(variables)}
    self._size = len(variables)
    self._shape = [tuple(v.shape) for v in variables]
    self._layers = {}   # id(layer): index of its kernel in ``variables``
    shapes = set()
    float32 = True
    self._stacks = []   # (id(attention layer), kernel indices to stack)
    for layer in model._flatten_layers(include_self=True, recursive=True):  # pylint: disable=protected-access
      if (isinstance(layer, keras.layers.Dense) and
          len(layer.kernel.shape) == 2 and id(layer.kernel) in position):
        self._layers[id(layer)] = position[id(layer.kernel)]
        shapes.add(tuple(layer.kernel.shape))
        float32 = float32 and layer.compute_dtype == "float32"
    for layer, projections in kernels.stepped_attentions(model):
      if all(id(d.kernel) in position and len(d.kernel.shape) == 2
             for d in projections):
        self._stacks.append((id(layer), tuple(position[id(d.kernel)]
                                              for d in projections)))
    softmax = getattr(model, "softmax_weights", None)
    self._softmax = None   # (id(embedding layer), index of its matrix)
    if softmax is not None and id(getattr(softmax, "embeddings", None)) in (
        position):
      self._softmax = (id(softmax), position[id(softmax.embeddings)])
    self.indices = frozenset(self._layers.values())
    self.shapes = tuple(sorted(shapes))   # the kernels' (d_in, d_out)
    self.packable = float32 and rows_product.available()
    self._outside = {}   # layout: (the values given, their arguments)

  def layouts(self):
    """The held layouts this model can read here: "packed" only where
    ``packable`` (``rows_product`` built, the model in float32)."""
    return tuple(name for name in LAYOUTS
                 if name != "packed" or self.packable)

  def choose(self, rows):
    """The layout a search of ``rows`` rows a step reads on this CPU:
    "packed", "transposed" or "keras" (``layout_probe``; measured once a
    process)."""
    return layout_probe.fastest(self.shapes, rows, self.packable)

  def outside(self, values, layout):
    """``values`` with each Dense kernel [d_in, d_out] held in ``layout``
    (materialized), then each stepped self-attention's stacked kernel,
    then (packed) the pre-softmax matrix; the last call's result for
    ``layout`` is reused for the same arrays."""
    values = list(values)
    given, prepared = self._outside.get(layout, (None, None))
    if given is not None and len(given) == len(values) and all(
        a is b for a, b in zip(given, values)):
      return prepared
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    hold = rows_product.pack if layout == "packed" else jnp.transpose
    prepared = [hold(v) if i in self.indices else v
                for i, v in enumerate(values)]
    if layout == "packed":   # panels may straddle the kernels: pack anew
      stack = lambda idx: rows_product.pack(jnp.concatenate(  # pylint: disable=unnecessary-lambda-assignment
          [values[i] for i in idx], axis=1))
    else:                    # the transposes made above, one on another
      stack = lambda idx: jnp.concatenate(  # pylint: disable=unnecessary-lambda-assignment
          [prepared[i] for i in idx], axis=0)
    prepared += [stack(indices) for _, indices in self._stacks]
    if layout == "packed" and self._softmax is not None:
      prepared.append(rows_product.pack(jnp.transpose(
          values[self._softmax[1]])))
    self._outside[layout] = (values, prepared)
    return prepared

  def inside(self, arguments, layout):
    """The values of ``variables`` in Keras's layout, for reads other than
    the held products inside ``reading`` (XLA drops the unread ones)."""
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    if layout == "packed":
      back = lambda v, i: rows_product.unpack(v, self._shape[i][1])  # pylint: disable=unnecessary-lambda-assignment
    else:
      back = lambda v, i: jnp.transpose(v)  # pylint: disable=unnecessary-lambda-assignment
    return [back(v, i) if i in self.indices else v
            for i, v in enumerate(arguments[:self._size])]

  @contextlib.contextmanager
  def reading(self, arguments, layout):
    """Within it, ``product_for(layer)`` and ``fused_product_for(layer)``
    multiply by the kernels ``arguments`` (``outside``'s list) hold in
    ``layout``."""
    if layout == "packed":
      def product(w, n):
        return lambda x: rows_product.product(x, w, n)
    else:
      def product(w, n):
        del n
        return lambda x: ops.einsum("...i,oi->...o", x, ops.cast(w, x.dtype))
    held = {key: product(arguments[i], self._shape[i][1])
            for key, i in self._layers.items()}
    for n, (key, indices) in enumerate(self._stacks):
      width = sum(self._shape[i][1] for i in indices)
      held[(key, "stacked")] = product(arguments[self._size + n], width)
    if layout == "packed" and self._softmax is not None:
      key, i = self._softmax
      held[key] = product(arguments[-1], self._shape[i][0])
    with kernels.pushed(_READING, held):
      yield


def layout_for(model, variables):
  """A ``KernelLayout`` where ``enabled()``, else None."""
  return KernelLayout(model, variables) if enabled() else None


def product_for(layer):
  """Inside ``reading``: x [..., d_in] -> x W [..., d_out] (no bias) for a
  Dense ``layer``, or x E^T [..., vocab] for the pre-softmax embedding
  where it is held; else None."""
  for held in reversed(_READING):
    if id(layer) in held:
      return held[id(layer)]
  return None


def fused_product_for(layer):
  """Inside ``reading``: x [..., d_model] -> x [W^Q W^K W^V], [..., h (2
  d_k + d_v)] (no bias) for a stepped self-attention ``layer``; else
  None."""
  for held in reversed(_READING):
    if (id(layer), "stacked") in held:
      return held[(id(layer), "stacked")]
  return None


def active():
  """Whether a ``reading`` is open (a JAX search on CPUs is being traced)."""
  return bool(_READING)
