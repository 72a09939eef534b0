"""The learning-rate schedule of section 5.3, equation (3):

    lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)
"""

import keras
from keras import ops

from t2t_keras.errors import UserError


def paper_learning_rate(step, hidden_size, warmup_steps, multiplier=1.0):
  """Equation (3) at ``step`` (1-based; a tensor or a number)."""
  step = ops.cast(step, "float32")
  return multiplier * hidden_size ** -0.5 * ops.minimum(
      ops.power(step, -0.5), step * float(warmup_steps) ** -1.5)


@keras.saving.register_keras_serializable(package="t2t_keras")
class PaperSchedule(keras.optimizers.schedules.LearningRateSchedule):
  """Equation (3) as a Keras schedule.

  Keras passes the optimizer's iteration count, 0 before the first update;
  the paper's step_num counts from 1, so update k uses step_num = k + 1.
  """

  def __init__(self, hidden_size, warmup_steps=4000, multiplier=1.0):
    self.hidden_size = int(hidden_size)
    self.warmup_steps = int(warmup_steps)
    self.multiplier = float(multiplier)

  def __call__(self, step):
    return paper_learning_rate(ops.cast(step, "float32") + 1.0,
                               self.hidden_size, self.warmup_steps,
                               self.multiplier)

  def get_config(self):
    return {"hidden_size": self.hidden_size,
            "warmup_steps": self.warmup_steps,
            "multiplier": self.multiplier}


def schedule_from_hparams(hparams):
  if hparams.learning_rate_schedule != "paper":
    raise UserError("unknown learning_rate_schedule "
                     f"{hparams.learning_rate_schedule!r}: expected 'paper'")
  return PaperSchedule(hparams.hidden_size,
                       hparams.learning_rate_warmup_steps,
                       hparams.learning_rate)
