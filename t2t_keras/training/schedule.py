"""Learning-rate schedules: the paper's, and products of registered factors.

Section 5.3, equation (3):

    lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

is ``paper_learning_rate`` below, the schedule ``"paper"`` (times the
``learning_rate`` hparam, 1.0 in the paper's sets). The hparam
``learning_rate_schedule`` names a product of factors, tensor2tensor's and
flax's WMT example's way of composing schedules from parts, e.g.
``"paper*cosine_decay"``; the paper's equation is also
``"constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"``
(tests/test_schedule.py checks that they agree). A new factor is a function
``(step, params) -> float32`` registered with
``@registry.register_schedule("name")``: ``step`` is the 1-based update
number (float32 tensor) and ``params`` a ``ScheduleParams``.
"""

import dataclasses
import math

import keras
from keras import ops

from t2t_keras import registry
from t2t_keras.errors import UserError


@dataclasses.dataclass(frozen=True)
class ScheduleParams:
  """What factors read: the ``learning_rate`` hparam (``constant``), the
  warm-up, d_model, and the step where decays reach 0 (the run's
  ``train_steps`` unless ``learning_rate_decay_steps`` says otherwise)."""
  learning_rate: float
  warmup_steps: int
  hidden_size: int
  decay_steps: int


def paper_learning_rate(step, hidden_size, warmup_steps, multiplier=1.0):
  """Equation (3) at ``step`` (1-based; a tensor or a number)."""
  step = ops.cast(step, "float32")
  return multiplier * hidden_size ** -0.5 * ops.minimum(
      ops.power(step, -0.5), step * float(warmup_steps) ** -1.5)


@registry.register_schedule("paper")
def paper(step, p):
  return paper_learning_rate(step, p.hidden_size, p.warmup_steps,
                             p.learning_rate)


@registry.register_schedule("constant")
def constant(step, p):
  del step
  return p.learning_rate


@registry.register_schedule("linear_warmup")
def linear_warmup(step, p):
  return ops.minimum(1.0, step / max(p.warmup_steps, 1))


@registry.register_schedule("rsqrt_decay")
def rsqrt_decay(step, p):
  return ops.rsqrt(ops.maximum(step, float(max(p.warmup_steps, 1))))


@registry.register_schedule("rsqrt_hidden_size")
def rsqrt_hidden_size(step, p):
  del step
  return p.hidden_size ** -0.5


@registry.register_schedule("inverse_sqrt")
def inverse_sqrt(step, p):
  """fairseq's: linear warm-up to ``learning_rate``, then lr * sqrt(w / s)."""
  return p.learning_rate * linear_warmup(step, p) * rsqrt_decay(step, p) * (
      max(p.warmup_steps, 1) ** 0.5)


def _decay_fraction(step, p):
  """0 until the end of warm-up, 1 at ``decay_steps`` and after."""
  span = max(p.decay_steps - p.warmup_steps, 1)
  return ops.clip((step - p.warmup_steps) / span, 0.0, 1.0)


@registry.register_schedule("cosine_decay")
def cosine_decay(step, p):
  """1 through warm-up, then half a cosine down to 0 at ``decay_steps``."""
  return 0.5 * (1.0 + ops.cos(math.pi * _decay_fraction(step, p)))


@registry.register_schedule("linear_decay")
def linear_decay(step, p):
  """1 through warm-up, then a straight line down to 0 at ``decay_steps``."""
  return 1.0 - _decay_fraction(step, p)


def factors(schedule):
  """The registered factor functions of ``"a*b*c"``; an unknown name is a
  one-line error listing the close ones."""
  names = [n.strip() for n in schedule.split("*")]
  if not all(names):
    raise UserError(f"learning_rate_schedule {schedule!r}: expected factor "
                    "names joined by '*', e.g. 'paper' or "
                    "'constant*linear_warmup*cosine_decay'")
  return [registry.lookup("schedule", n) for n in names]


@keras.saving.register_keras_serializable(package="t2t_keras")
class FactorSchedule(keras.optimizers.schedules.LearningRateSchedule):
  """The product of ``schedule``'s factors as a Keras schedule.

  Keras passes the optimizer's iteration count, 0 before the first update;
  the paper's step_num counts from 1, so update k uses step_num = k + 1
  (+ ``step_offset``: a fine-tuning run that continues its source's
  schedule).
  """

  def __init__(self, schedule, learning_rate, warmup_steps, hidden_size,
               decay_steps, step_offset=0):
    self.schedule = schedule
    self.step_offset = int(step_offset)
    self.params = ScheduleParams(float(learning_rate), int(warmup_steps),
                                 int(hidden_size), int(decay_steps))
    self._factors = factors(schedule)

  def __call__(self, step):
    step = ops.cast(step, "float32") + 1.0 + float(self.step_offset)
    rate = 1.0
    for factor in self._factors:
      rate = rate * factor(step, self.params)
    return ops.cast(rate, "float32")

  def get_config(self):
    return dict(schedule=self.schedule, step_offset=self.step_offset,
                **dataclasses.asdict(self.params))


def schedule_from_hparams(hparams, train_steps=None):
  """The hparams' ``learning_rate_schedule``; decays end at
  ``learning_rate_decay_steps``, else ``train_steps`` (the run's), else
  the hparams' ``train_steps``."""
  decay = (hparams.get("learning_rate_decay_steps", 0) or train_steps or
           hparams.train_steps)
  return FactorSchedule(hparams.learning_rate_schedule, hparams.learning_rate,
                        hparams.learning_rate_warmup_steps,
                        hparams.hidden_size, decay,
                        hparams.get("learning_rate_step_offset", 0))
