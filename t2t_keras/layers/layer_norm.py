"""Layer normalization (Ba et al., the paper's [1]; section 3.1):

    y = gamma * (x - mean(x)) / sqrt(var(x) + epsilon) + beta

over the last axis, in float32 whatever the input's dtype (Keras's
``LayerNormalization``).
"""

import keras

from t2t_keras import kernels
from t2t_keras.kernels import layer_norm as layer_norm_kernel


@keras.saving.register_keras_serializable(package="t2t_keras")
class LayerNormalization(keras.layers.LayerNormalization):
  """``keras.layers.LayerNormalization`` (same arguments and weights).
  Where ``kernels.enabled()``, ``kernels.layer_norm`` computes the same
  values up to float32 rounding: in training with a closed-form gradient,
  at inference in fewer ops.

  Call args:
    inputs: [..., d] with a known rank.
    training: whether this is a training step.
  Returns:
    [..., d] in the layer's compute dtype.
  """

  def call(self, inputs, training=None):
    if kernels.enabled() and layer_norm_kernel.fits(self, inputs):
      norm = (layer_norm_kernel.layer_norm if training else
              layer_norm_kernel.forward)
      return keras.ops.cast(norm(self, inputs), self.compute_dtype)
    return super().call(inputs)
