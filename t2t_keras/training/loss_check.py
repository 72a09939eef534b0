"""The check that a training run's loss stayed finite, read from the
device a few updates at a time (never once an update), before every
save: a checkpoint never holds weights trained on a NaN or Inf loss."""

import math

import tensorflow as tf

from t2t_keras.errors import UserError


class NonFiniteLossError(UserError, FloatingPointError):
  """The loss became NaN or Inf; the message says where."""


class LossCheck:
  """Collects each update's loss tensor (``add``) and reads them all at
  ``check``.

  Args:
    checkpointer: the run's ``checkpoints.Checkpointer``, whose
      checkpoints of weights at or after a bad loss are moved aside.
  """

  def __init__(self, checkpointer):
    self.checkpointer = checkpointer
    self._pending = []      # (step, loss tensor) not yet checked

  def add(self, step, loss):
    self._pending.append((step, loss))

  def check(self):
    """Reads the losses of the updates since the last check (one read from
    the device); ``NonFiniteLossError`` naming the first non-finite one.
    The loss of update k is computed at the weights after update k - 1: a
    checkpoint of those (or later) weights is not a good one, and is moved
    aside."""
    pending, self._pending = self._pending, []
    if not pending:
      return
    losses = tf.stack([loss for _, loss in pending]).numpy()
    for (step, _), loss in zip(pending, losses):
      if not math.isfinite(loss):
        moved = self.checkpointer.drop_from(step - 1)
        latest = self.checkpointer.latest
        raise NonFiniteLossError(
            f"the training loss became {loss} at step {step}; stopped "
            "without saving" + (
                f", the checkpoint(s) of its weights moved to {moved}"
                if moved else "") + (
                    f", so the last good checkpoint ({latest}) is kept"
                    if latest else "; no good checkpoint is left, so the "
                    "same command starts over"))
