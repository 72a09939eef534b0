"""A position-wise linear map: ``keras.layers.Dense``, y = x W + b."""

import keras
from keras import ops

from t2t_keras import kernels
from t2t_keras.kernels import dense as dense_kernel
from t2t_keras.kernels import kernel_layout
from t2t_keras.kernels import one_row


@keras.saving.register_keras_serializable(package="t2t_keras")
class Dense(keras.layers.Dense):
  """``keras.layers.Dense`` (same arguments and weights). In training, where
  ``kernels.enabled()``, ``kernels.dense`` computes the same values with a
  faster gradient. Inside a JAX search on CPUs, ``kernels.kernel_layout``
  holds the kernel in a layout for few rows, and in a TensorFlow decoding
  step of one row ``kernels.one_row`` gives another product;
  ``_product_held`` multiplies by it.

  Call args:
    inputs: [..., d_in].
    training: whether this is a training step.
  Returns:
    [..., units].
  """

  def call(self, inputs, training=None):
    if training and kernels.enabled() and dense_kernel.fits(self, inputs):
      return dense_kernel.dense(self, inputs)
    held = None if training else (kernel_layout.product_for(self) or
                                  one_row.product_for(self))
    if held is not None:
      return self._product_held(inputs, held)
    return super().call(inputs, training=training)

  def _product_held(self, inputs, product):
    """x W + b with x W from ``product`` (``kernel_layout``'s held kernel):
    ``keras.layers.Dense``'s call with its one product replaced."""
    x = product(inputs)
    if self.bias is not None:
      x = ops.add(x, self.bias)
    if self.activation is not None:
      x = self.activation(x)
    return x
