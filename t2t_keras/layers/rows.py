"""Position-wise layers applied to one matrix of rows.

A Dense layer on a [batch, length, d] tensor becomes a Tensordot (reshape,
MatMul, reshape) followed by a separate BiasAdd and activation. On the
[batch * length, d] matrix it is a MatMul directly followed by BiasAdd (and
ReLU), which TensorFlow's CPU graph rewriter fuses into one oneDNN kernel
(the same holds for XLA and JAX, which fuse either form).
"""

from keras import ops


def apply_to_rows(layer, x, out_shape=None):
  """``layer`` (a layer or function, position-wise: acts on the last axis
  only, whose output's last dimension d_out is static) applied to ``x``
  [..., d] as one [rows, d] matrix; returns [..., d_out], or that reshaped
  to ``out_shape`` (a tuple whose product is the same).

  The dynamic shape is read at most once, and not at all when only the
  first axis is unknown (a decoding step's [batch, 1, d]): under
  TensorFlow each read is a few graph ops, run at every step of a loop."""
  depth = x.shape[-1]
  middle = tuple(x.shape[1:-1])
  known = None not in middle    # then only the first axis is unknown: -1
  if depth is None or (out_shape is None and not known):
    shape = ops.shape(x)
    depth = shape[-1]
  y = layer(ops.reshape(x, (-1, depth)))
  if out_shape is None:
    out_shape = ((-1,) + middle if known else tuple(shape[:-1])) + (
        y.shape[-1],)
  return ops.reshape(y, out_shape)
