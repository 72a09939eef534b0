"""Dropout (section 5.4 of the paper): in training each element is zeroed
with probability ``rate`` and the rest scaled by 1 / (1 - rate)."""

import keras

from t2t_keras import kernels
from t2t_keras.kernels import dropout as dropout_kernel


@keras.saving.register_keras_serializable(package="t2t_keras")
class Dropout(keras.layers.Dropout):
  """``keras.layers.Dropout``; same arguments. Where ``kernels.enabled()``
  the masks come from ``kernels.dropout`` (16 random bits an element).

  Call args:
    inputs: [..., d].
    training: drop only when True.
  Returns:
    ``inputs`` with dropped elements zeroed and the rest scaled.
  """

  def call(self, inputs, training=False):
    if training and kernels.enabled() and dropout_kernel.fits(self, inputs):
      return dropout_kernel.dropout(self, inputs)
    return super().call(inputs, training=training)
