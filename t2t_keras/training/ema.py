"""An exponential moving average of the weights (Polyak averaging), the
worked example of a training hook: ``ema_decay=0.999`` turns it on.

After update t (counted from 1)

    d_t = min(decay, (1 + t) / (10 + t))
    shadow <- d_t * shadow + (1 - d_t) * w

for each trainable weight w (``training.moving_average``, the rule once for
every backend). The warm-up d_t is TensorFlow's rule for
``ExponentialMovingAverage(num_updates=t)``: without it a short run's average
keeps a share decay^t of the random initialization (1.8% after 4,000 steps
at 0.999). Checkpoints, evaluation (dev metrics, the best
checkpoint) and everything that reads checkpoints (t2t-decoder, t2t-avg-all,
t2t-exporter, warm starts) see the averaged weights: while a checkpoint is
written or dev is evaluated, the model holds the shadow and the shadow slot
holds the training weights, which the checkpoint keeps under ``ema`` so that
a resumed run continues the very same training weights and average.

With several replicas each replica averages its own copy of the weights on
its own device (``strategy.extended.update``, as an optimizer updates its
slots): the copies are equal, so nothing is sent between devices.
"""

import contextlib

import keras
import tensorflow as tf

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.training.hooks import TrainingHook
from t2t_keras.training.moving_average import averaged, decay_at


@registry.register_hook("ema")
class ExponentialMovingAverage(TrainingHook):
  """Keeps ``shadow`` copies of the model's trainable weights (float32
  like them), averaged with ``hparams.ema_decay`` after each update."""

  def __init__(self, hparams):
    self.decay = float(hparams.get("ema_decay", 0.0))
    if not 0 < self.decay < 1:
      raise UserError(f"the ema hook needs 0 < ema_decay < 1, got "
                      f"{self.decay}")
    self.shadow = None
    self._update = None

  def trackables(self):
    return {"ema": self._checkpoint}

  def attach(self, trainer):
    """Makes the shadow variables (under the trainer's strategy)."""
    with trainer.strategy.scope():
      self.weights = list(trainer.model.trainable_variables)
      self.shadow = [tf.Variable(w, trainable=False, name="ema_shadow")
                     for w in self.weights]
    self._checkpoint = tf.train.Checkpoint(
        **{f"w{i}": v for i, v in enumerate(self.shadow)})
    decay = self.decay
    extended = trainer.strategy.extended
    # The tf.Variables behind Keras's (a replica's copy is picked from them).
    weights = [w.value if isinstance(w, keras.Variable) else w
               for w in self.weights]

    @tf.function(autograph=False)
    def update(step):
      d = decay_at(decay, step)

      def average(shadow, weight):
        return shadow.assign(averaged(shadow, weight, d))
      for shadow, weight in zip(self.shadow, weights):
        extended.update(shadow, average, args=(weight,), group=False)
    self._update = update

  def _swap(self):
    for shadow, weight in zip(self.shadow, self.weights):
      kept = tf.identity(weight)
      weight.assign(shadow)
      shadow.assign(kept)

  def begin(self, trainer, restored):
    if restored:     # the checkpoint's model slot holds the average
      self._swap()
    else:            # a fresh or warm-started run averages from here
      for shadow, weight in zip(self.shadow, self.weights):
        shadow.assign(weight)

  def after_update(self, trainer, step, logs):
    self._update(tf.constant(step, tf.float32))

  @contextlib.contextmanager
  def weights_for_use(self, trainer):
    self._swap()
    try:
      yield
    finally:
      self._swap()
