"""The JAX searches hold each linear map's W as [d_out, d_in].

A decoding step multiplies one row a sentence (a beam's rows) by every
decoder matrix. XLA's CPU products run that few-row product faster against
a matrix whose rows run along its input dimension, y = x (W^T)^T, than
against W as Keras stores it, [d_in, d_out]: for the base model's 49
products of a step (benchmarks/step_floor.py's chain) 1.1-1.2x at one row
and 1.3-1.7x at four. So ``JaxSearch`` passes each ``keras.layers.Dense``
kernel to its compiled search transposed, once for a given set of weights,
and inside ``reading(...)`` ``layers.dense.Dense`` multiplies by it as
``einsum("...i,oi->...o")``: one product with those dimension numbers, no
transpose op (a transpose back to [d_in, d_out] is hoisted out of the
decoding loop by XLA and materialized, which gains nothing). The
pre-softmax product reads the embedding matrix [vocab, d_model] that way
as it is: while ``active()``, ``TokenEmbedding.transposed`` forms no
[d_model, vocab] copy. A decoder self-attention's step multiplies its row
by W^Q, W^K and W^V: they are passed stacked as well, [W^Q W^K W^V]^T
(``fused_for``; the layer's ``step_projections`` says which), one product
instead of three (a one-sentence greedy search of the base model 1.08x
and 1.10x faster, medians of 9 and 11 paired requests in two runs; beam 4,
four rows a step: 0.99x and 1.04x, within noise).

    layout = layout_for(model, variables)        # None where it is off
    arguments = layout.outside(values)           # before the jitted call
    with layout.reading(arguments):              # inside it
      values = layout.inside(arguments)          # for the StatelessScope

On where Keras runs on JAX and its devices are CPUs (the only place it was
measured), unless ``T2T_KERAS_KERNELS=0``; and a search reads it only where
``faster`` (``layout_probe``) finds it faster for its rows on this CPU:
where it is not, the search reads Keras's own layout.
"""

import contextlib
import os

import keras

from t2t_keras.kernels import layout_probe

_READING = []   # the {id(layer): W^T} of each enclosing ``reading``


def enabled():
  """Whether JAX searches take [d_out, d_in] kernels (module docstring)."""
  if os.environ.get("T2T_KERAS_KERNELS", "") == "0":
    return False
  if keras.backend.backend() != "jax":
    return False
  import jax  # pylint: disable=g-import-not-at-top
  return jax.devices()[0].platform == "cpu"


class KernelLayout:
  """Which of ``variables`` are Dense kernels, and their two layouts.

  Args:
    model: the model whose ``keras.layers.Dense`` layers (``layers.dense``
      among them) and stepped self-attention layers are looked for.
    variables: the list whose values a search receives, in order.
  """

  def __init__(self, model, variables):
    position = {id(v): i for i, v in enumerate(variables)}
    self._size = len(variables)
    self._layers = {}   # id(layer): index of its kernel in ``variables``
    shapes = set()
    self._stacks = []   # (id(attention layer), kernel indices to stack)
    for layer in model._flatten_layers(include_self=True, recursive=True):  # pylint: disable=protected-access
      if (isinstance(layer, keras.layers.Dense) and
          len(layer.kernel.shape) == 2 and id(layer.kernel) in position):
        self._layers[id(layer)] = position[id(layer.kernel)]
        shapes.add(tuple(layer.kernel.shape))
      projections = getattr(layer, "step_projections", lambda: None)()
      if projections and all(id(d.kernel) in position and
                             len(d.kernel.shape) == 2 for d in projections):
        self._stacks.append((id(layer), tuple(position[id(d.kernel)]
                                              for d in projections)))
    self.indices = frozenset(self._layers.values())
    self.shapes = tuple(sorted(shapes))   # the kernels' (d_in, d_out)
    self._given = self._prepared = None

  def faster(self, rows):
    """Whether this layout is the faster for a search's steps of ``rows``
    rows on this CPU (``layout_probe``; measured once a process)."""
    return layout_probe.transposed_faster(self.shapes, rows)

  def outside(self, values):
    """``values`` with each Dense kernel [d_in, d_out] as [d_out, d_in]
    (materialized), then each stepped self-attention's [W^Q W^K W^V]^T;
    the last call's result is reused for the same arrays."""
    values = list(values)
    given = self._given
    if given is not None and len(given) == len(values) and all(
        a is b for a, b in zip(given, values)):
      return self._prepared
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    self._given = values
    prepared = [jnp.transpose(v) if i in self.indices else v
                for i, v in enumerate(values)]
    self._prepared = prepared + [
        jnp.concatenate([prepared[i] for i in indices], axis=0)
        for _, indices in self._stacks]
    return self._prepared

  def inside(self, arguments):
    """The values of ``variables`` in Keras's layout, for reads other than
    a Dense layer's product inside ``reading``."""
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    return [jnp.transpose(v) if i in self.indices else v
            for i, v in enumerate(arguments[:self._size])]

  @contextlib.contextmanager
  def reading(self, arguments):
    """Within it, ``transposed_for(layer)`` answers each Dense layer's
    [d_out, d_in] kernel and ``fused_for(layer)`` each stepped
    self-attention's stacked one, from ``arguments`` (``outside``'s
    list)."""
    held = {key: arguments[i] for key, i in self._layers.items()}
    held.update({(key, "stacked"): arguments[self._size + n]
                 for n, (key, _) in enumerate(self._stacks)})
    _READING.append(held)
    try:
      yield
    finally:
      _READING.pop()


def layout_for(model, variables):
  """A ``KernelLayout`` where ``enabled()``, else None."""
  return KernelLayout(model, variables) if enabled() else None


def transposed_for(layer):
  """``layer``'s kernel as [d_out, d_in] inside ``reading``, else None."""
  for held in reversed(_READING):
    if id(layer) in held:
      return held[id(layer)]
  return None


def fused_for(layer):
  """A stepped self-attention ``layer``'s [W^Q W^K W^V]^T, [h (2 d_k +
  d_v), d_model], inside ``reading``, else None."""
  for held in reversed(_READING):
    if (id(layer), "stacked") in held:
      return held[(id(layer), "stacked")]
  return None


def active():
  """Whether a ``reading`` is open (a JAX search on CPUs is being traced)."""
  return bool(_READING)
