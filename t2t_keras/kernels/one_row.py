"""A decoding step of one row multiplies by Eigen's kernels, not oneDNN's.

A greedy or sampling step over one sentence multiplies one row by each of
the decoder's matrices (48 products in the base model). TensorFlow's CPU
graph rewriter hands MatMul to oneDNN, whose setup costs tens of
microseconds a call, a third of a 512 x 512 product's time at one row.
``BatchMatMulV3`` with a float32 output is a product oneDNN does not take:
Eigen's kernel runs the step's chain of products faster at one row and
slower from four rows on (9.1-9.6 -> 7.4-7.9 ms at one row, 10.0-10.2 ->
11.1-11.9 ms at four; a 2-core AVX-512 EPYC; a one-sentence greedy
SavedModel 0.355 -> 0.324 s in one process). Rows are known only when a
request runs, so a model prepared for a search of one hypothesis a sentence
(``models.prepared``) traces its step twice and picks when it runs:

    logits, cache = one_row.step(lambda: step(one_row=True),
                                 lambda: step(one_row=False), rows, dtype)
    # = tf.cond(rows == 1, ...)

In the one-row branch its Dense products are ``product(x, W, True)``, on x
as it comes (``BatchMatMulV3`` broadcasts x's leading axes over W): no
slice or reshape around it, which took a one-sentence greedy request about
5% of its time. The same values up to float32 rounding. On where
``kernels.enabled()`` (TensorFlow, no GPU), outside XLA (which compiles the
products itself).
"""

from t2t_keras import kernels


def fits(dtype):
  """Whether a step of ``dtype`` (the model's compute dtype) takes the
  one-row products here: float32, the kernels on, not inside XLA."""
  return kernels.enabled() and not kernels.in_xla() and dtype == "float32"


def step(one_row, any_rows, rows, dtype):
  """A decoding step (a nest of tensors): where ``fits(dtype)``,
  ``tf.cond(rows == 1, one_row, any_rows)`` (both traced), else
  ``any_rows()``. ``rows``: scalar int (a Python int where known)."""
  if not fits(dtype) or (isinstance(rows, int) and rows != 1):
    return any_rows()
  if isinstance(rows, int):   # known when traced
    return one_row()
  import tensorflow as tf
  return tf.cond(tf.equal(rows, 1), one_row, any_rows)


def product(x, kernel, one_row):
  """x [..., d_in] (rank 2 or more) times ``kernel`` [d_in, d_out] ->
  [..., d_out]: one ``BatchMatMulV3`` (its batch axes broadcast over
  ``kernel``; no reshape) where ``one_row``, else ``tf.matmul`` (oneDNN's)
  on [rows, d_in]; the shape read only where more than the first axis is
  unknown."""
  import tensorflow as tf
  if one_row:
    return tf.raw_ops.BatchMatMulV3(x=x, y=kernel, Tout=tf.float32)
  if len(x.shape) == 2:
    return tf.matmul(x, kernel)
  y = tf.matmul(tf.reshape(x, (-1, x.shape[-1])), kernel)
  middle = tuple(x.shape[1:-1])
  shape = ((-1,) + middle if None not in middle else
           tuple(tf.unstack(tf.shape(x))[:-1])) + (kernel.shape[-1],)
  return tf.reshape(y, shape)
