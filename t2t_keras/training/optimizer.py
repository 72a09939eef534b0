"""Adam with the paper's betas and epsilon (section 5.3)."""

import keras

from t2t_keras.training.schedule import schedule_from_hparams


def optimizer_from_hparams(hparams):
  if hparams.optimizer != "adam":
    raise ValueError(f"unknown optimizer {hparams.optimizer!r}: "
                     "expected 'adam'")
  return keras.optimizers.Adam(
      learning_rate=schedule_from_hparams(hparams),
      beta_1=hparams.optimizer_adam_beta1,
      beta_2=hparams.optimizer_adam_beta2,
      epsilon=hparams.optimizer_adam_epsilon)
