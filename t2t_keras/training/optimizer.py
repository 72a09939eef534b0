"""Adam with the paper's betas and epsilon (section 5.3); with float16
activations, wrapped in dynamic loss scaling."""

import keras

from t2t_keras.errors import UserError
from t2t_keras.training.schedule import schedule_from_hparams


OPTIMIZERS = ("adam", "sgd")


@keras.saving.register_keras_serializable(package="t2t_keras")
class FusedAdam(keras.optimizers.Adam):
  """``keras.optimizers.Adam``, same variables and the same update

      m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
      w <- w - lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + epsilon),

  applied under TensorFlow by its one fused ``ResourceApplyAdam`` kernel per
  variable instead of about ten elementwise passes (a few percent of a base
  training step on the CPU). Other backends and AMSGrad use Keras's code.
  """

  def update_step(self, gradient, variable, learning_rate):
    if keras.backend.backend() != "tensorflow" or self.amsgrad:
      return super().update_step(gradient, variable, learning_rate)
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    dtype = variable.dtype
    index = self._get_variable_index(variable)
    step = tf.cast(self.iterations + 1, dtype)
    tf.raw_ops.ResourceApplyAdam(
        var=variable.handle, m=self._momentums[index].handle,
        v=self._velocities[index].handle,
        beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step),
        beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
        lr=tf.cast(learning_rate, dtype), beta1=tf.cast(self.beta_1, dtype),
        beta2=tf.cast(self.beta_2, dtype),
        epsilon=tf.cast(self.epsilon, dtype),
        grad=tf.cast(gradient, dtype))
    return None


def optimizer_from_hparams(hparams):
  """Adam (the paper), or plain SGD (for ablations and for tests, where an
  update equal to -lr * gradient exposes the gradient itself)."""
  if hparams.optimizer not in OPTIMIZERS:
    raise UserError(f"unknown optimizer {hparams.optimizer!r}: expected "
                     f"one of {OPTIMIZERS}")
  if hparams.optimizer == "sgd":
    return keras.optimizers.SGD(learning_rate=schedule_from_hparams(hparams))
  adam = FusedAdam(
      learning_rate=schedule_from_hparams(hparams),
      beta_1=hparams.optimizer_adam_beta1,
      beta_2=hparams.optimizer_adam_beta2,
      epsilon=hparams.optimizer_adam_epsilon)
  if hparams.get("activation_dtype") == "float16":
    # float16 gradients underflow without loss scaling; bfloat16 has
    # float32's range and needs none.
    return keras.optimizers.LossScaleOptimizer(adam)
  return adam
