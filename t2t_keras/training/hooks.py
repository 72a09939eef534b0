"""Training hooks: the pieces of the loop around the update.

``Trainer.fit`` applies one update after another; everything else it does
is a hook, called in order after each update: the hparams' hooks (the
exponential moving average below, a user's), progress lines, TensorBoard
summaries, checkpoints, then the run's evaluation (dev metrics, the best
checkpoint, early stopping: ``training.evaluation``); a time limit
(``training.time_limit``) runs with the hparams' hooks when asked for. A new
hook subclasses ``TrainingHook`` and registers it with
``@registry.register_hook("name")``;
the hparam ``training_hooks="name,..."`` turns it on (its constructor takes
the hparams). See CONTRIBUTING.md.
"""

import contextlib
import time

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.logs import log_line


class TrainingHook:
  """Does nothing at every point of the loop; override what you need.

  Attributes a hook may set: ``trainer.stop_reason`` (a string) ends
  ``fit`` after the current update; ``trainer.seconds_left`` (a number)
  bounds the progress line's ETA.
  """

  def attach(self, trainer):
    """Once, when the trainer is made (its model and optimizer built):
    create state here."""

  def trackables(self):
    """{name: tf.Variable or trackable}: state saved in every checkpoint and
    restored with it (asked once, when the trainer is made)."""
    return {}

  def begin(self, trainer, restored):
    """After the trainer restored a checkpoint (``restored`` True) or
    started fresh or from a warm start (False), before the first update."""

  def after_update(self, trainer, step, logs):
    """After update ``step``; ``logs``: loss (mean smoothed loss per
    token), tokens, grad_norm."""

  def end(self, trainer):
    """When ``fit`` returns (its goal reached or a stop asked for)."""

  def weights_for_use(self, trainer):
    """A context under which the model holds the weights that checkpoints,
    evaluation and export should see (the trainer's own by default)."""
    del trainer
    return contextlib.nullcontext()


class ProgressHook(TrainingHook):
  """A console line every ``every`` updates and at ``total_steps``: loss,
  tokens/s over the window, and the time left."""

  def __init__(self, every, total_steps, log=log_line):
    self.every, self.total_steps, self.log = every, total_steps, log
    self._reset()

  def _reset(self):
    self.start, self.tokens, self.steps = time.time(), 0.0, 0

  def begin(self, trainer, restored):
    self._reset()

  def after_update(self, trainer, step, logs):
    self.tokens += logs["tokens"]
    self.steps += 1
    if step % self.every and step != self.total_steps:
      return
    elapsed = max(time.time() - self.start, 1e-9)
    logs["tokens_per_sec"] = self.tokens / elapsed
    eta = (self.total_steps - step) * elapsed / self.steps
    eta = min(eta, max(trainer.seconds_left, 0.0))
    self.log(f"step {step}/{self.total_steps}  loss {logs['loss']:.4f}  "
             f"{logs['tokens_per_sec']:,.0f} tokens/s  ETA {_duration(eta)}")
    self._reset()


class SummaryHook(TrainingHook):
  """TensorBoard scalars at the progress lines (runs after ProgressHook)."""

  def __init__(self, writer):
    self.writer = writer

  def after_update(self, trainer, step, logs):
    if "tokens_per_sec" not in logs:
      return
    with self.writer.as_default(step=step):
      tf.summary.scalar("loss", logs["loss"])
      tf.summary.scalar("learning_rate", trainer.optimizer.learning_rate)
      tf.summary.scalar("gradient_norm", logs["grad_norm"])
      tf.summary.scalar("tokens_per_sec", logs["tokens_per_sec"])


class CheckpointHook(TrainingHook):
  """Saves as the trainer's ``CheckpointPolicy`` says, and at the end, the
  weights ``trainer.weights_for_use()`` shows."""

  def after_update(self, trainer, step, logs):
    if trainer.checkpointer.due(step):
      with trainer.weights_for_use():
        trainer.checkpointer.save(step)

  def end(self, trainer):
    with trainer.weights_for_use():
      trainer.checkpointer.save(trainer.step)


def hooks_from_hparams(hparams):
  """The hooks the hparams ask for: ``training_hooks`` (comma-separated
  registered names), with ``ema`` first when ``ema_decay`` > 0."""
  names = [n.strip() for n in hparams.get("training_hooks", "").split(",")
           if n.strip()]
  decay = hparams.get("ema_decay", 0.0)
  if not 0 <= decay < 1:
    raise UserError(f"ema_decay must be in [0, 1) (0: off), got {decay}")
  if decay > 0 and "ema" not in names:
    names.insert(0, "ema")
  return [registry.lookup("hook", name)(hparams) for name in names]


def _duration(seconds):
  seconds = int(seconds)
  return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"

