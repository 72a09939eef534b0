"""A position-wise linear map (``keras.layers.Dense``) whose backward pass
on TensorFlow's CPU kernels is faster.

Autodiff of ``y = x W + b`` computes the input's gradient as ``dy W^T`` with
a ``transpose_b`` product and the bias's with ``BiasAddGrad``. At the base
model's shapes oneDNN's float32 ``transpose_b`` kernel is slow (d_model =
512: 8-22% slower than the same product on a transposed copy of W), and
Grappler folds an explicit ``tf.transpose`` back into ``transpose_b``. Here
the float32 gradient multiplies by a copy of W transposed with ``tf.einsum``
(which Grappler leaves alone): one pass over the weights buys a faster
product over all the rows; in bfloat16 the two are equally fast, so it keeps
``transpose_b``. The bias gradient, the column sums of dy, is a product of a
row of ones with dy: in bfloat16 it accumulates in float32 and rounds once,
where ``BiasAddGrad`` missed the exact sums of 4,096 rows of N(0, 9) by
about 10 on average (the product by 0.2, the final rounding alone). Alone it
runs faster (at [4,096, 512]: 0.25 against 0.49 ms bfloat16, 0.24 against
0.41 float32), but whole training steps were as fast as before, within this
machine's noise. The forward pass (MatMul + BiasAdd + ReLU, which TensorFlow
fuses) is Keras's own, and other backends keep Keras's layer.
"""

import keras


def _tf_dense(x, kernel, bias, relu):
  """``[relu](x kernel + bias)`` for x [rows, d_in], kernel [d_in, d_out],
  bias [d_out] or None (variables or tensors, float32 or bfloat16), with
  the gradient above."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  @tf.custom_gradient
  def dense(x, kernel, *bias):
    y = tf.matmul(x, kernel)
    if bias:
      y = tf.nn.bias_add(y, bias[0])
    if relu:
      y = tf.nn.relu(y)

    def grad(dy):
      if relu:
        dy = tf.raw_ops.ReluGrad(gradients=dy, features=y)
      if kernel.dtype == tf.float32:
        dx = tf.matmul(dy, tf.einsum("ij->ji", kernel))
      else:
        dx = tf.matmul(dy, kernel, transpose_b=True)
      grads = (dx, tf.matmul(x, dy, transpose_a=True))
      if bias:
        ones = tf.ones([1, tf.shape(dy)[0]], dy.dtype)
        grads += (tf.matmul(ones, dy)[0],)
      return grads

    return y, grad

  # Read the variables here: a custom gradient's body must not use them.
  weights = [tf.convert_to_tensor(w) for w in (kernel, bias) if w is not None]
  return dense(x, *weights)


@keras.saving.register_keras_serializable(package="t2t_keras")
class Dense(keras.layers.Dense):
  """``keras.layers.Dense`` (same arguments and weights) with the
  TensorFlow gradient above in float32 and bfloat16.

  Call args:
    inputs: [rows, d_in] (other ranks and activations: Keras's path).
    training: the written-out gradient only when True (inference graphs,
      decoding and exported models included, are Keras's).
  Returns:
    [rows, units].
  """

  def call(self, inputs, training=None):
    relu = self.activation is keras.activations.relu
    if (not training or keras.backend.backend() != "tensorflow"
        or self.compute_dtype not in ("float32", "bfloat16")
        or len(inputs.shape) != 2
        or not (relu or self.activation is keras.activations.linear)
        or getattr(self, "quantization_mode", None)):
      return super().call(inputs, training=training)
    return _tf_dense(inputs, self.kernel, self.bias, relu)
