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

import collections.abc
import contextlib
import time

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line


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

  def adjust_gradients(self, trainer, grads, variables):
    """Inside the compiled step, on each replica, once the replicas'
    gradients of the loss are summed: returns the gradients the optimizer
    applies (a list like ``grads``, one per trainable ``variables``)."""
    del trainer, variables
    return grads

  def end(self, trainer):
    """When ``fit`` returns (its goal reached or a stop asked for)."""

  def weights_for_use(self, trainer):
    """A context under which the model holds the weights that checkpoints,
    evaluation and export should see (the trainer's own by default)."""
    del trainer
    return contextlib.nullcontext()


class StepLogs(collections.abc.MutableMapping):
  """An update's figures for the hooks: loss (mean smoothed loss per
  token), tokens, grad_norm. Each is read from the device (a float) only
  when a hook asks for it, so the host can prepare the next update while
  the device runs this one; ``tensor(name)`` gives it unread. Hooks may add
  their own values (plain numbers)."""

  def __init__(self, **tensors):
    self._tensors = dict(tensors)
    self._values = {}

  def tensor(self, name):
    return self._tensors[name] if name in self._tensors else \
        self._values[name]

  def __getitem__(self, name):
    if name not in self._values:
      self._values[name] = float(self._tensors[name])
    return self._values[name]

  def __setitem__(self, name, value):
    self._values[name] = value

  def __delitem__(self, name):
    self._values.pop(name, None)
    self._tensors.pop(name, None)

  def __iter__(self):
    return iter(set(self._tensors) | set(self._values))

  def __len__(self):
    return len(set(self._tensors) | set(self._values))


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
    # Summed on the device; read at the line.
    tokens = logs.tensor("tokens") if isinstance(logs, StepLogs) else \
        logs["tokens"]
    self.tokens = self.tokens + tokens
    self.steps += 1
    if step % self.every and step != self.total_steps:
      return
    elapsed = max(time.time() - self.start, 1e-9)
    logs["tokens_per_sec"] = float(self.tokens) / elapsed
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
  # Fine-tuning's (training.finetune), turned on by their hparams.
  for name, on in (("finetune_l2", hparams.get("finetune_l2", 0.0)),
                   ("finetune_freeze", hparams.get("finetune_freeze", ""))):
    if on and name not in names:
      names.append(name)
  return [registry.lookup("hook", name)(hparams) for name in names]


def _duration(seconds):
  seconds = int(seconds)
  return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"

