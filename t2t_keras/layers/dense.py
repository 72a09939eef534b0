"""A position-wise linear map (``keras.layers.Dense``) whose float32
backward pass on TensorFlow's CPU kernels is faster.

Autodiff of ``y = x W`` computes the input's gradient as ``dy W^T`` with a
``transpose_b`` product. At the base model's shapes oneDNN's float32
``transpose_b`` kernel is slow (d_model = 512: 8-22% slower than the same
product on a transposed copy of W), and Grappler folds an explicit
``tf.transpose`` back into ``transpose_b``. Here the gradient multiplies by
a copy of W transposed with ``tf.einsum`` (which Grappler leaves alone): one
pass over the weights buys a faster product over all the rows. In bfloat16
the kernels are equally fast either way, so only float32 takes this path;
the forward pass (MatMul + BiasAdd + ReLU, which TensorFlow fuses) and all
other backends are Keras's own.
"""

import keras


def _tf_dense(x, kernel, bias, relu):
  """``[relu](x kernel + bias)`` for x [rows, d_in], kernel [d_in, d_out],
  bias [d_out] or None (variables or tensors); its gradient uses a
  transposed copy of kernel."""
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
      grads = (tf.matmul(dy, tf.einsum("ij->ji", kernel)),
               tf.matmul(x, dy, transpose_a=True))
      if bias:
        grads += (tf.raw_ops.BiasAddGrad(out_backprop=dy),)
      return grads

    return y, grad

  # Read the variables here: a custom gradient's body must not use them.
  weights = [tf.convert_to_tensor(w) for w in (kernel, bias) if w is not None]
  return dense(x, *weights)


@keras.saving.register_keras_serializable(package="t2t_keras")
class Dense(keras.layers.Dense):
  """``keras.layers.Dense`` (same arguments and weights) with the float32
  TensorFlow gradient above.

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
        or self.compute_dtype != "float32" or len(inputs.shape) != 2
        or not (relu or self.activation is keras.activations.linear)
        or getattr(self, "quantization_mode", None)):
      return super().call(inputs, training=training)
    return _tf_dense(inputs, self.kernel, self.bias, relu)
