"""A wall-clock limit on training (t2t-trainer --train_minutes; fairseq's
--stop-time-hours): the updates stop once the run has trained that long,
and the step reached is checkpointed and evaluated as a last step would be.

The time is counted from the first update's start to the end of each
update, evaluations and checkpoints between them included, and is kept in
every checkpoint: a run interrupted and resumed goes on counting from its
last checkpoint's total, and the same command run again after the limit
applies no more updates. In a
multi-worker run the workers stop on the mean of their clocks, so all of
them stop after the same update.
"""

import time

import tensorflow as tf

from t2t_keras.errors import UserError
from t2t_keras.training.agreement import WorkerAgreement
from t2t_keras.training.hooks import TrainingHook
from t2t_keras.training.strategy import num_workers


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
    self._agree = None

  def attach(self, trainer):
    with trainer.strategy.scope():
      self.seconds = tf.Variable(0.0, trainable=False, dtype=tf.float64,
                                 name="trained_seconds")
    if num_workers() > 1:
      # The mean of every worker's clock: the same number everywhere.
      self._agree = WorkerAgreement(trainer.strategy).mean

  def trackables(self):
    return {"time_limit": tf.train.Checkpoint(seconds=self.seconds)}

  def _trained(self):
    seconds = self._before + time.time() - self._start
    if self._agree is not None:
      seconds = self._agree(seconds)
    return seconds

  def begin(self, trainer, restored):
    self._before = float(self.seconds.numpy()) if restored else 0.0
    self._start = time.time()
    if self._before >= self.limit:
      trainer.stop_reason = "time limit"
      self.log(f"the time limit of {self.limit / 60:g} min was reached "
               f"before, at step {trainer.step}; no more updates "
               "(raise --train_minutes to go on)")

  def after_update(self, trainer, step, logs):
    seconds = self._trained()
    self.seconds.assign(seconds)
    trainer.seconds_left = self.limit - seconds
    if seconds >= self.limit and trainer.stop_reason is None:
      trainer.stop_reason = "time limit"
      self.log(f"stopping at step {step}: {seconds / 60:.1f} min of "
               f"training reached the time limit of {self.limit / 60:g} min")

  def end(self, trainer):
    # The last checkpoint keeps the time to here (this worker's clock).
    self.seconds.assign(self._before + time.time() - self._start)
