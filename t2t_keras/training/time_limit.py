"""A wall-clock limit on training (t2t-trainer --train_minutes; fairseq's
--stop-time-hours): the updates stop once the run has trained that long,
and the step reached is checkpointed and evaluated as a last step would be.

The time is counted from the first update's start to the end of each
update, evaluations and checkpoints between them included, and is kept in
every checkpoint: a run interrupted and resumed goes on counting from its
last checkpoint's total, and the same command run again after the limit
applies no more updates. In a
multi-worker run the workers vote with their clocks (``training.cluster``)
and stop on the mean, so all of them stop after the same update.
"""

import time

import tensorflow as tf

from t2t_keras.errors import UserError
from t2t_keras.training.cluster import MEAN
from t2t_keras.training.hooks import TrainingHook


class TimeLimitHook(TrainingHook):
  """Sets ``trainer.stop_reason`` once ``minutes`` of training have passed.

  Args:
    minutes: the limit, > 0.
    log: where the line that says it stopped goes.
  """

  def __init__(self, minutes, log):
    if not minutes > 0:
      raise UserError(f"--train_minutes must be > 0, got {minutes}")
    self.limit = 60.0 * minutes
    self.log = log
    self.seconds = None          # tf.Variable: seconds trained so far
    self._start = self._before = 0.0
    self._cluster = None

  def attach(self, trainer):
    with trainer.strategy.scope():
      self.seconds = tf.Variable(0.0, trainable=False, dtype=tf.float64,
                                 name="trained_seconds")
    if trainer.cluster.workers > 1:
      # The mean of every worker's clock: the same number everywhere.
      self._cluster = trainer.cluster
      self._cluster.ballot("trained_seconds", MEAN)

  def trackables(self):
    return {"time_limit": tf.train.Checkpoint(seconds=self.seconds)}

  def _trained(self, step):
    """Seconds trained after update ``step``: this process's clock alone, or
    on several workers their mean at a shared decision (None between
    them)."""
    seconds = self._before + time.time() - self._start
    if self._cluster is None:
      return seconds
    self._cluster.vote("trained_seconds", seconds)
    return self._cluster.decision("trained_seconds", step)

  def begin(self, trainer, restored):
    self._before = float(self.seconds.numpy()) if restored else 0.0
    self._start = time.time()
    if self._before >= self.limit:
      trainer.stop_reason = "time limit"
      self.log(f"the time limit of {self.limit / 60:g} min was reached "
               f"before, at step {trainer.step}; no more updates "
               "(raise --train_minutes to go on)")

  def after_update(self, trainer, step, logs):
    seconds = self._trained(step)
    if seconds is None:
      return
    self.seconds.assign(seconds)
    trainer.seconds_left = self.limit - seconds
    if seconds >= self.limit and trainer.stop_reason is None:
      trainer.stop_reason = "time limit"
      self.log(f"stopping at step {step}: {seconds / 60:.1f} min of "
               f"training reached the time limit of {self.limit / 60:g} min")

  def end(self, trainer):
    # The last checkpoint keeps the time to here (this worker's clock).
    self.seconds.assign(self._before + time.time() - self._start)
