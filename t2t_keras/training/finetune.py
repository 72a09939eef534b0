"""Fine-tuning that keeps what the source model knew: two training hooks
that change the update's gradients (``TrainingHook.adjust_gradients``), and
the schedule a warm start continues.

- ``finetune_l2`` > 0: L2 toward the source weights (Barone et al. 2017,
  "Regularization techniques for fine-tuning in neural machine
  translation"). The loss gains ``finetune_l2 * sum_i ||w_i - w0_i||^2``
  over the trainable weights, ``w0`` a frozen float32 copy of the weights
  the run started from (the warm start's), saved in every checkpoint; its
  gradient ``2 * finetune_l2 * (w - w0)`` is added to the loss's, once per
  update, after the replicas' gradients are summed. The loss it adds to is
  the mean per target token, so ``finetune_l2`` is per token.
- ``finetune_freeze`` = "embeddings", "encoder", "decoder" (or several
  joined by "+", e.g. "embeddings+encoder"; a comma would end the hparam):
  those weights get no gradient for the first ``finetune_freeze_steps``
  updates (0: the whole run). With a fresh Adam their moments stay 0, so
  they stay bit for bit what the source had. "embeddings" is the
  embeddings and the pre-softmax weights, shared or not.
- ``warm_start_schedule`` (t2t-trainer's ``--warm_start_schedule``):
  "restart" (the hparams' schedule from step 1, warm-up again), "continue"
  (the schedule goes on from the source's last step: no second warm-up),
  or "constant=F" (a constant rate, F times the source's last rate).
  ``schedule_overrides`` turns it into hparams, recorded in hparams.json.
"""

import json
import os

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.hparams import HParams
from t2t_keras.training.checkpoints import step_of
from t2t_keras.training.hooks import TrainingHook
from t2t_keras.training.schedule import schedule_from_hparams

# Which weights each name of ``finetune_freeze`` holds, by variable path.
FREEZE_GROUPS = {
    "embeddings": lambda path: "_embedding/" in path or "/softmax/" in path,
    "encoder": lambda path: "/encoder/" in path,
    "decoder": lambda path: "/decoder/" in path,
}


def freeze_groups(text):
  """The group names of a ``finetune_freeze`` value; an unknown one is a
  one-line error listing them."""
  names = [n.strip() for n in (text or "").replace(",", "+").split("+")
           if n.strip()]
  unknown = [n for n in names if n not in FREEZE_GROUPS]
  if unknown:
    raise UserError(f"finetune_freeze={text!r}: unknown part(s) "
                    f"{', '.join(unknown)}; expected some of "
                    f"{', '.join(FREEZE_GROUPS)}, joined by '+'")
  return names


def frozen(variables, groups):
  """For each variable, whether one of ``groups`` holds it."""
  return [any(FREEZE_GROUPS[g](v.path) for g in groups) for v in variables]


@registry.register_hook("finetune_freeze")
class FreezeHook(TrainingHook):
  """No gradient for the ``finetune_freeze`` parts during the first
  ``finetune_freeze_steps`` updates (0: all of them)."""

  def __init__(self, hparams):
    self.groups = freeze_groups(hparams.get("finetune_freeze", ""))
    self.steps = int(hparams.get("finetune_freeze_steps", 0))
    if not self.groups:
      raise UserError("the finetune_freeze hook needs finetune_freeze, e.g. "
                      "'embeddings' or 'encoder'")
    if hparams.get("optimizer") not in ("adam", "sgd"):
      raise UserError(f"finetune_freeze with optimizer={hparams.optimizer}: "
                      "its weight decay moves frozen weights; use adam or sgd")

  def attach(self, trainer):
    self.mask = frozen(trainer.model.trainable_variables, self.groups)
    if not any(self.mask):
      raise UserError(f"finetune_freeze={'+'.join(self.groups)} holds none of "
                      "this model's weights")

  def adjust_gradients(self, trainer, grads, variables):
    if self.steps:
      keep = tf.cast(trainer.optimizer.iterations >= self.steps, tf.float32)
    else:
      keep = tf.constant(0.0)
    return [g * tf.cast(keep, g.dtype) if held else g
            for g, held in zip(grads, self.mask)]


@registry.register_hook("finetune_l2")
class SourceL2Hook(TrainingHook):
  """Adds the gradient of ``finetune_l2 * ||w - w0||^2``, ``w0`` the
  weights the run started from (saved with every checkpoint)."""

  def __init__(self, hparams):
    self.weight = float(hparams.get("finetune_l2", 0.0))
    if self.weight <= 0:
      raise UserError(f"the finetune_l2 hook needs finetune_l2 > 0, got "
                      f"{self.weight}")

  def attach(self, trainer):
    with trainer.strategy.scope():
      self.anchor = [tf.Variable(tf.cast(v, tf.float32), trainable=False,
                                 name="finetune_anchor")
                     for v in trainer.model.trainable_variables]

  def trackables(self):
    return {"finetune_anchor": tf.train.Checkpoint(
        **{f"w{i}": v for i, v in enumerate(self.anchor)})}

  def begin(self, trainer, restored):
    if not restored:   # the start (a warm start's weights): the anchor
      for anchor, v in zip(self.anchor, trainer.model.trainable_variables):
        anchor.assign(tf.cast(v, tf.float32))

  def penalty(self, variables):
    """``finetune_l2 * sum ||w - w0||^2`` (float32)."""
    return self.weight * tf.add_n([
        tf.reduce_sum(tf.square(tf.cast(v, tf.float32) - a))
        for v, a in zip(variables, self.anchor)])

  def adjust_gradients(self, trainer, grads, variables):
    # Under float16 the loss's gradients are scaled by the loss scale (the
    # optimizer divides them by it): the pull is scaled alike.
    pull = 2.0 * self.weight * trainer.gradient_scale()
    return [g + tf.cast(pull * (tf.cast(v, tf.float32) - a), g.dtype)
            for g, v, a in zip(grads, variables, self.anchor)]


SCHEDULES = ("restart", "continue", "constant=F")
# What ``schedule_overrides`` may set: a resumed run takes them from its
# hparams.json.
SCHEDULE_HPARAMS = ("learning_rate_step_offset", "learning_rate_schedule",
                    "learning_rate")


def schedule_overrides(choice, source_step, source_rate):
  """hparams (name -> value) for ``--warm_start_schedule=choice``, from the
  source's last step and the rate its schedule gave there."""
  if choice in (None, "", "restart"):
    return {}
  if choice == "continue":
    return {"learning_rate_step_offset": int(source_step)}
  if choice.startswith("constant="):
    try:
      fraction = float(choice.split("=", 1)[1])
    except ValueError:
      fraction = -1.0
    if fraction <= 0:
      raise UserError(f"--warm_start_schedule={choice}: expected constant=F "
                      "with F > 0, the fraction of the source's last rate")
    return {"learning_rate_schedule": "constant",
            "learning_rate": fraction * float(source_rate)}
  raise UserError(f"--warm_start_schedule={choice}: expected one of "
                  f"{', '.join(SCHEDULES)}")


def source_schedule_end(source_dir, checkpoint_path, like):
  """(the source run's step at ``checkpoint_path``, the learning rate its
  schedule gave the update there), from its hparams.json (read ``like``
  the new run's hparams) and model.json's train_steps."""
  hparams = HParams.load(os.path.join(source_dir, "hparams.json"), like=like)
  try:
    with open(os.path.join(source_dir, "model.json"), encoding="utf-8") as f:
      train_steps = (json.load(f).get("flags") or {}).get("train_steps")
  except (OSError, ValueError):
    train_steps = None
  step = step_of(checkpoint_path)
  rate = schedule_from_hparams(hparams, train_steps)(max(step - 1, 0))
  return step, float(rate)


def plan(c, hparams, planned, log):
  """A new warm-started run's fine-tuning settings (``c``, a RunConfig;
  ``planned``, its ``warm_start.WarmStartPlan``), checked, and
  ``--warm_start_schedule`` turned into the hparams (recorded in
  hparams.json) that give its schedule."""
  if hparams.finetune_freeze and c.warm_start_optimizer:
    raise UserError("finetune_freeze with --warm_start_optimizer: the "
                    "source's Adam moments would still move the frozen "
                    "weights; a frozen part needs a fresh optimizer")
  if c.warm_start_schedule in ("", "restart"):
    return
  if c.warm_start_optimizer:
    raise UserError(f"--warm_start_schedule={c.warm_start_schedule} with "
                    "--warm_start_optimizer: the source's step already "
                    "continues its schedule")
  step, rate = source_schedule_end(planned.source_dir, planned.path,
                                            hparams)
  for name, value in schedule_overrides(
      c.warm_start_schedule, step, rate).items():
    setattr(hparams, name, value)
  log(f"--warm_start_schedule={c.warm_start_schedule}: the source's last "
      f"update was step {step:,} at learning rate {rate:.3g}; this run's "
      f"schedule is {hparams.learning_rate_schedule} x "
      f"{hparams.learning_rate:.3g}"
      + (f" from step {hparams.learning_rate_step_offset + 1:,}"
         if hparams.learning_rate_step_offset else ""))
