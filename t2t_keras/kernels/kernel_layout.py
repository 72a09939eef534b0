"""A JAX search holds the decoder's matrices in a layout for few rows.

A decoding step multiplies one row a hypothesis by every decoder matrix.
On CPUs XLA's dot runs that few-row product slower against W as Keras
stores it, [d_in, d_out], than it could: it packs W into panels on every
call. So a model prepared for a JAX search (``models.prepared``) passes
the matrices its steps read to the compiled search in one of two held
layouts, made once for a given set of weights (``HeldMatrices``):

  "packed"      each matrix as ``rows_product``'s panels, [ceil(d_out / P),
                d_in, P], multiplied by its FFI handler, which reads each
                weight once (the base model's chain of a step's 49 products,
                ``benchmarks/step_floor.py``, 1.2-1.3x faster than XLA's dot
                at one row and 2.2-2.5x at four on an AVX-512 EPYC). The
                pre-softmax product reads the embedding packed as well
                ([d_model, vocab] in panels). Where ``rows_product`` builds
                and the model computes in float32.
  "transposed"  each matrix as [d_out, d_in], multiplied as
                ``einsum("...i,oi->...o")`` (one product with those
                dimension numbers, no transpose op); the pre-softmax
                product reads the embedding [vocab, d_model] as it is.
                1.1-1.2x faster than Keras's layout at one row and 1.3-1.7x
                at four on an EPYC without AVX-512, slower at four on one
                with it.

A matrix may be several stacked side by side: a decoder self-attention's
step multiplies its row by [W^Q W^K W^V], one product instead of three (a
one-sentence greedy search 1.08x and 1.10x faster, transposed layout).
Which layout a search reads, Keras's among them, is measured for its rows a
step (``layout_probe``).

    held = HeldMatrices(matrices, shapes, float32)   # once
    held = HeldMatrices(matrices, shapes, float32, weights="int8")
    arrays = held.outside(values, layout)            # before the jitted call
    products = held.products(arrays, layout)         # inside it: {key: f}

On where Keras runs on JAX and its devices are CPUs (the only place it was
measured), unless ``T2T_KERAS_KERNELS=0``.

Rounded weights (``weights`` "int8" or "bfloat16", ``kernels.quantize``):
every matrix, the pre-softmax one included, is held rounded in every
layout, Keras's too ("keras", the only one where the layouts are off): the
packed layout as int8 panels with a scale a column or as bfloat16 panels
(``rows_product``), the transposed and Keras's as float32 values of the
rounded weights, and one more:

  "native"      Keras's layout in the rounded dtype, multiplied in it:
                bfloat16 rows times bfloat16 W with a float32 result, or
                int8 x int8 -> int32 with each row of x rounded to int8 on
                the fly (one scale a row, CTranslate2's), times both
                scales. XLA's CPU dot runs these at 0.45-0.64x float32's
                time from 8 rows up and slower at one (a step's chain of
                the base model's products; ``layout_probe`` decides).
"""

import os

import keras
from keras import ops

from t2t_keras.kernels import layout_probe
from t2t_keras.kernels import quantize
from t2t_keras.kernels import rows_product

LAYOUTS = ("packed", "transposed", "native")


def enabled():
  """Whether JAX searches take held matrices (module docstring)."""
  if os.environ.get("T2T_KERAS_KERNELS", "") == "0":
    return False
  if keras.backend.backend() != "jax":
    return False
  import jax
  return jax.devices()[0].platform == "cpu"


class HeldMatrices:
  """Matrices made of a search's weight values, held for few rows.

  Args:
    matrices: {key: (indices, transposed, packed_only)}: the matrix is the
      values at ``indices`` (each [d_in, d_out_i]) side by side, [d_in, sum
      d_out_i], each first transposed where ``transposed``; ``packed_only``
      ones are held in the packed layout only.
    shapes: the shape of each value, in order.
    float32: whether the model computes in float32 (packed needs it).
    weights: "float32", or "int8" / "bfloat16" (held rounded).
    probing: whether the held layouts are on (``enabled()``); off, only
      rounded weights are held, in Keras's layout.
  """

  def __init__(self, matrices, shapes, float32, weights="float32",
               probing=True):
    self._matrices = dict(matrices)
    self._shapes = [tuple(s) for s in shapes]
    self.weights = quantize.check(weights)
    self.rounding = self.weights != "float32"
    self.probing = probing
    self.packable = probing and float32 and rows_product.available()
    self._outside = {}   # layout: (the values given, the arrays made)

  def _shape(self, key):
    indices, transposed, _ = self._matrices[key]
    shapes = [self._shapes[i][::-1] if transposed else self._shapes[i]
              for i in indices]
    return shapes[0][0], sum(s[1] for s in shapes)

  def keys(self, layout):
    """The matrices held in ``layout`` (all of them where rounded)."""
    return [key for key, (_, _, packed_only) in self._matrices.items()
            if layout == "packed" or not packed_only or self.rounding]

  def layouts(self):
    """The held layouts this model can read here: "packed" only where
    ``packable`` (``rows_product`` built, the model in float32), "native"
    only for rounded weights; none where the layouts are off."""
    return tuple(name for name in LAYOUTS
                 if self.probing and (name != "packed" or self.packable)
                 and (name != "native" or self.rounding))

  def choose(self, rows):
    """The layout a search of ``rows`` rows a step reads on this CPU:
    "packed", "transposed" or "keras" (``layout_probe``, over the shapes of
    the matrices' parts; measured once a process)."""
    if not self.probing:
      return "keras"
    shapes = tuple(sorted({self._shapes[i] for key in self.keys("transposed")
                           for i in self._matrices[key][0]
                           if not self._matrices[key][1]}))
    return layout_probe.fastest(shapes, rows, self.packable, self.weights)

  def outside(self, values, layout):
    """The held arrays of ``values`` in ``layout``, one a key of
    ``keys(layout)``, in order; the last call's are reused for the same
    arrays."""
    values = list(values)
    given, arrays = self._outside.get(layout, (None, None))
    if given is not None and len(given) == len(values) and all(
        a is b for a, b in zip(given, values)):
      return arrays
    import jax.numpy as jnp
    arrays = []
    for key in self.keys(layout):
      indices, transposed, _ = self._matrices[key]
      parts = [jnp.transpose(values[i]) if transposed else values[i]
               for i in indices]
      arrays.append(layout_probe.hold(
          parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=1),
          layout, self.weights))
    self._outside[layout] = (values, arrays)
    return arrays

  def products(self, arrays, layout):
    """{key: x [..., d_in] -> x M [..., d_out]} multiplying by ``arrays``
    (``outside``'s, inside the compiled search)."""
    found = {}
    for key, held in zip(self.keys(layout), arrays):
      width = self._shape(key)[1]
      if layout == "packed":
        found[key] = (lambda w, n: lambda x: rows_product.held_product(
            x, w, n))(held, width)
      elif layout == "keras":
        found[key] = (lambda w: lambda x: ops.matmul(
            x, ops.cast(w, x.dtype)))(held)
      elif layout == "native":
        found[key] = (lambda w: lambda x: quantize.native_product(x, w))(
            held)
      else:
        found[key] = (lambda w: lambda x: ops.einsum(
            "...i,oi->...o", x, ops.cast(w, x.dtype)))(held)
    return found
