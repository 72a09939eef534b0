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
request runs, so a search of one hypothesis a sentence traces its step
twice and picks when it runs:

    logits, cache = one_row.step(lambda: step(...), rows, model.compute_dtype)
    # = tf.cond(rows == 1, step with Dense products in BatchMatMulV3, step)

Inside the one-row branch ``product_for(layer)`` gives a Dense layer of a
float32 model its product, on x as it comes (``BatchMatMulV3`` broadcasts
x's leading axes over W): no slice or reshape around it, which took a
one-sentence greedy request about 5% of its time. The same values up to
float32 rounding. On where ``kernels.enabled()`` (TensorFlow, no GPU),
outside XLA (which compiles the products itself).
"""

from t2t_keras import kernels

_ONE_ROW = []   # True inside ``step``'s one-row branch


def step(run, rows, dtype):
  """``run()`` (a decoding step: a nest of tensors); where the kernels are
  on and ``dtype`` (the model's compute dtype) is float32, as
  ``tf.cond(rows == 1, ...)`` of ``run`` traced twice, the first time with
  ``product_for`` answering. ``rows``: scalar int."""
  if (not kernels.enabled() or kernels.in_xla() or dtype != "float32" or
      (isinstance(rows, int) and rows != 1)):
    return run()
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  def one_row():
    with kernels.pushed(_ONE_ROW, True):
      return run()

  if isinstance(rows, int):   # known when traced
    return one_row()
  return tf.cond(tf.equal(rows, 1), one_row, run)


def product(x, kernel):
  """x [..., d_in] (rank 2 or more) times ``kernel`` [d_in, d_out] ->
  [..., d_out]: one ``BatchMatMulV3`` (its batch axes broadcast over
  ``kernel``; no reshape) inside ``step``'s one-row branch, else
  ``tf.matmul`` (oneDNN's) on [rows, d_in]; the shape read only where more
  than the first axis is unknown."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if _ONE_ROW:
    return tf.raw_ops.BatchMatMulV3(x=x, y=kernel, Tout=tf.float32)
  if len(x.shape) == 2:
    return tf.matmul(x, kernel)
  y = tf.matmul(tf.reshape(x, (-1, x.shape[-1])), kernel)
  middle = tuple(x.shape[1:-1])
  shape = ((-1,) + middle if None not in middle else
           tuple(tf.unstack(tf.shape(x))[:-1])) + (kernel.shape[-1],)
  return tf.reshape(y, shape)


def product_for(layer):
  """Inside ``step``'s one-row branch, ``x -> x W`` for a float32 Dense
  ``layer`` (``product``); else None."""
  if (not _ONE_ROW or layer.compute_dtype != "float32"
      or getattr(layer, "quantization_mode", None)):
    return None
  kernel = layer.kernel
  return lambda x: product(x, kernel)
