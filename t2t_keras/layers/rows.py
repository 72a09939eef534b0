"""Position-wise layers applied to one matrix of rows.

A Dense layer on a [batch, length, d] tensor becomes a Tensordot (reshape,
MatMul, reshape) followed by a separate BiasAdd and activation. On the
[batch * length, d] matrix it is a MatMul directly followed by BiasAdd (and
ReLU), which TensorFlow's CPU graph rewriter fuses into one oneDNN kernel
(the same holds for XLA and JAX, which fuse either form).
"""

from keras import ops


def apply_to_rows(layer, x):
  """``layer`` (a layer or function, position-wise: acts on the last axis
  only) applied to ``x`` [..., d] as one [rows, d] matrix; returns
  [..., d_out]."""
  shape = ops.shape(x)
  y = layer(ops.reshape(x, (-1, shape[-1])))
  return ops.reshape(y, tuple(shape[:-1]) + (ops.shape(y)[-1],))
