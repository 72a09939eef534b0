"""Adam with the paper's betas and epsilon (section 5.3); with float16
activations, wrapped in dynamic loss scaling."""

import keras

from t2t_keras.errors import UserError
from t2t_keras.training.schedule import schedule_from_hparams


OPTIMIZERS = ("adam", "sgd")


def optimizer_from_hparams(hparams):
  """Adam (the paper), or plain SGD (for ablations and for tests, where an
  update equal to -lr * gradient exposes the gradient itself)."""
  if hparams.optimizer not in OPTIMIZERS:
    raise UserError(f"unknown optimizer {hparams.optimizer!r}: expected "
                     f"one of {OPTIMIZERS}")
  if hparams.optimizer == "sgd":
    return keras.optimizers.SGD(learning_rate=schedule_from_hparams(hparams))
  adam = keras.optimizers.Adam(
      learning_rate=schedule_from_hparams(hparams),
      beta_1=hparams.optimizer_adam_beta1,
      beta_2=hparams.optimizer_adam_beta2,
      epsilon=hparams.optimizer_adam_epsilon)
  if hparams.get("activation_dtype") == "float16":
    # float16 gradients underflow without loss scaling; bfloat16 has
    # float32's range and needs none.
    return keras.optimizers.LossScaleOptimizer(adam)
  return adam
