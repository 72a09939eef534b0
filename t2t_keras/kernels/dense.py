"""A faster backward pass for ``y = [relu](x W + b)`` on TensorFlow's CPU
kernels (``layers.Dense`` calls it in training).

Autodiff computes the input's gradient as ``dy W^T`` with a ``transpose_b``
product and the bias's with ``BiasAddGrad``. At the base model's shapes
oneDNN's float32 ``transpose_b`` kernel is slow (d_model = 512: 8-22% slower
than the same product on a transposed copy of W), and Grappler folds an
explicit ``tf.transpose`` back into ``transpose_b``. Here the float32
gradient multiplies by a copy of W transposed with ``tf.einsum`` (which
Grappler leaves alone): one pass over the weights buys a faster product over
all the rows; in bfloat16 the two are equally fast, so it keeps
``transpose_b``. The bias gradient, the column sums of dy, is a product of a
row of ones with dy: in bfloat16 it accumulates in float32 and rounds once,
where ``BiasAddGrad`` missed the exact sums of 4,096 rows of N(0, 9) by
about 10 on average. The forward pass is the same ops as Keras's (MatMul +
BiasAdd + ReLU, which TensorFlow fuses).
"""

import keras


def fits(layer, inputs):
  """Whether ``dense`` computes ``layer(inputs)``: a 2-D input, float32 or
  bfloat16, linear or ReLU, not quantized."""
  return (layer.compute_dtype in ("float32", "bfloat16")
          and len(inputs.shape) == 2
          and layer.activation in (keras.activations.relu,
                                   keras.activations.linear)
          and not getattr(layer, "quantization_mode", None))


def dense(layer, x):
  """``layer(x)`` for x [rows, d_in] -> [rows, units], with the gradient
  above."""
  import tensorflow as tf
  relu = layer.activation is keras.activations.relu

  @tf.custom_gradient
  def forward(x, kernel, *bias):
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
  weights = [tf.convert_to_tensor(w) for w in (layer.kernel, layer.bias)
             if w is not None]
  return forward(x, *weights)
