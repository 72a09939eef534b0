"""Adam through TensorFlow's fused kernel (the optimizer ``adam`` uses it).

``keras.optimizers.Adam``'s update

    m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
    w <- w - lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + epsilon)

runs as about ten elementwise passes a variable; ``ResourceApplyAdam`` does
it in one (a few percent of a base training step on the CPU). The same
variables (Keras's private ``_momentums`` and ``_velocities``, read here
only), so checkpoints do not depend on which path ran.
"""

import keras

from t2t_keras import kernels


@keras.saving.register_keras_serializable(package="t2t_keras")
class FusedAdam(keras.optimizers.Adam):
  """``keras.optimizers.Adam`` whose update runs as one kernel a variable
  where ``kernels.enabled()`` (not with AMSGrad)."""

  def update_step(self, gradient, variable, learning_rate):
    if not kernels.enabled() or self.amsgrad:
      return super().update_step(gradient, variable, learning_rate)
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    dtype = variable.dtype
    index = self._get_variable_index(variable)
    step = tf.cast(self.iterations + 1, dtype)
    tf.raw_ops.ResourceApplyAdam(
        var=variable.handle, m=self._momentums[index].handle,  # pylint: disable=protected-access
        v=self._velocities[index].handle,  # pylint: disable=protected-access
        beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step),
        beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
        lr=tf.cast(learning_rate, dtype), beta1=tf.cast(self.beta_1, dtype),
        beta2=tf.cast(self.beta_2, dtype),
        epsilon=tf.cast(self.epsilon, dtype),
        grad=tf.cast(gradient, dtype))
    return None
