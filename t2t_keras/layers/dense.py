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

``output_scale`` s computes ``s (x W + b)`` in training as ``x (s W) + s
b``: a pass over the [d_in, d_out] weights instead of over all [rows,
d_out] outputs, forward and backward (multi-head attention folds 1 /
sqrt(d_k) into W^Q this way); inference, whose decoding steps have fewer
rows than d_in, scales the outputs. The variables stay W and b.
"""

import keras
from keras import ops


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

  Args: as ``keras.layers.Dense``, and ``output_scale``: a constant s > 0
    that multiplies the output (linear or relu activations only), folded
    into the weights at use (default 1).

  Call args:
    inputs: [rows, d_in] (other ranks and activations: Keras's path).
    training: the written-out gradient and the scale folded into the
      weights only when True (inference graphs, decoding and exported
      models included, are Keras's).
  Returns:
    [rows, units].
  """

  def __init__(self, units, output_scale=1.0, **kwargs):
    super().__init__(units, **kwargs)
    self.output_scale = float(output_scale)
    if self.output_scale != 1.0 and not (
        self.output_scale > 0 and self.activation in (
            keras.activations.linear, keras.activations.relu)):
      raise ValueError("Dense output_scale needs a positive scale and a "
                       f"linear or relu activation, got {self.output_scale} "
                       f"and {self.activation.__name__}")

  def call(self, inputs, training=None):
    relu = self.activation is keras.activations.relu
    if (not training or getattr(self, "quantization_mode", None)
        or getattr(self, "lora_enabled", False)):
      # Inference (few rows a decoding step) scales the output rows;
      # s act(x W + b) = act(s (x W + b)) for s > 0.
      y = super().call(inputs, training=training)
      return y if self.output_scale == 1.0 else y * self.output_scale
    if (keras.backend.backend() == "tensorflow"
        and self.compute_dtype == "float32" and len(inputs.shape) == 2
        and (relu or self.activation is keras.activations.linear)):
      return _tf_dense(inputs, *self._scaled_weights(), relu)
    if self.output_scale == 1.0:
      return super().call(inputs, training=training)
    kernel, bias = self._scaled_weights()
    y = ops.matmul(inputs, kernel)
    return self.activation(y if bias is None else ops.add(y, bias))

  def _scaled_weights(self):
    """(kernel, bias or None) times ``output_scale``."""
    if self.output_scale == 1.0:
      return self.kernel, self.bias
    scale = ops.cast(self.output_scale, self.compute_dtype)
    kernel = ops.cast(self.kernel, self.compute_dtype) * scale
    bias = (None if self.bias is None
            else ops.cast(self.bias, self.compute_dtype) * scale)
    return kernel, bias

  def get_config(self):
    config = super().get_config()
    config.update(output_scale=self.output_scale)
    return config
