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
  on TensorFlow, CPUs and GPUs (``kernels.enabled(on_gpus=True)``; not
  with AMSGrad)."""

  _scalars = None   # {(dtype, device): the update's scalars}, per update

  def _backend_update_step(self, grads, trainable_variables, learning_rate):
    # One update's scalars (the bias corrections' powers, the learning rate
    # and betas in each variable's dtype) are the same for every variable:
    # computed once per dtype and device, not once per variable (which made
    # a tenth of a training step's graph and its tracing time).
    self._scalars = {}
    try:
      return super()._backend_update_step(grads, trainable_variables,
                                          learning_rate)
    finally:
      self._scalars = None

  def _update_scalars(self, dtype, device, learning_rate):
    """beta1^t, beta2^t, lr, beta1, beta2, epsilon in ``dtype``."""
    import tensorflow as tf
    key = (tf.as_dtype(dtype).name, device)
    cache = self._scalars if self._scalars is not None else {}
    if key not in cache:
      step = tf.cast(self.iterations + 1, dtype)
      beta1, beta2 = (tf.cast(self.beta_1, dtype), tf.cast(self.beta_2, dtype))
      cache[key] = dict(
          beta1_power=tf.pow(beta1, step), beta2_power=tf.pow(beta2, step),
          lr=tf.cast(learning_rate, dtype), beta1=beta1, beta2=beta2,
          epsilon=tf.cast(self.epsilon, dtype))
    return cache[key]

  def update_step(self, gradient, variable, learning_rate):
    if not kernels.enabled(on_gpus=True) or self.amsgrad:
      return super().update_step(gradient, variable, learning_rate)
    import tensorflow as tf
    dtype = variable.dtype
    index = self._get_variable_index(variable)
    tf.raw_ops.ResourceApplyAdam(
        var=variable.handle, m=self._momentums[index].handle,
        v=self._velocities[index].handle,
        grad=tf.cast(gradient, dtype),
        **self._update_scalars(dtype, variable.device, learning_rate))
    return None
