"""A training loop: the paper's optimizer, schedule and smoothed loss, with
checkpoints that a re-run of the same command resumes from.

The step is one ``tf.function`` whose input signature has unknown batch and
length, so batches of different shapes never retrace it.
"""

import math
import os
import time

import tensorflow as tf

from t2t_keras.logs import log_line
from t2t_keras.training.loss import smoothed_cross_entropy
from t2t_keras.training.optimizer import optimizer_from_hparams

_FEATURE_SPEC = {"inputs": tf.TensorSpec([None, None], tf.int64),
                 "targets": tf.TensorSpec([None, None], tf.int64)}


class Trainer:
  """Trains ``model`` with the hparams' optimizer, schedule and smoothing.

  Args:
    model: a built Transformer (features dict -> float32 logits).
    hparams: the HParams it was built from.
    output_dir: where checkpoints go; None keeps nothing on disk.
    keep_checkpoint_max: how many recent checkpoints to keep.
  """

  def __init__(self, model, hparams, output_dir=None, keep_checkpoint_max=5):
    self.model = model
    self.hparams = hparams
    self.optimizer = optimizer_from_hparams(hparams)
    self.optimizer.build(model.trainable_variables)
    self.checkpoint = tf.train.Checkpoint(model=model,
                                          optimizer=self.optimizer)
    self.manager = None
    if output_dir:
      self.manager = tf.train.CheckpointManager(
          self.checkpoint, output_dir, max_to_keep=keep_checkpoint_max,
          step_counter=self.optimizer.iterations)
    self._train_step = tf.function(self._step, input_signature=[_FEATURE_SPEC])
    self._eval_step = tf.function(self._score,
                                  input_signature=[_FEATURE_SPEC])

  @property
  def step(self):
    """Number of updates applied so far."""
    return int(self.optimizer.iterations.numpy())

  def restore(self):
    """Loads the latest checkpoint in output_dir, if any; returns its path."""
    if self.manager and self.manager.latest_checkpoint:
      self.checkpoint.restore(self.manager.latest_checkpoint).expect_partial()
      return self.manager.latest_checkpoint
    return None

  def save(self):
    return self.manager.save(checkpoint_number=self.step) if self.manager \
        else None

  def _step(self, features):
    with tf.GradientTape() as tape:
      logits = self.model(features, training=True)
      loss_sum, tokens = smoothed_cross_entropy(
          logits, features["targets"], self.hparams.label_smoothing)
      loss = loss_sum / tf.maximum(tokens, 1.0)
    grads = tape.gradient(loss, self.model.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
    return loss, tokens

  def _score(self, features):
    logits = self.model(features, training=False)
    loss_sum, tokens = smoothed_cross_entropy(logits, features["targets"], 0.0)
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int64)
    real = tf.not_equal(features["targets"], 0)
    correct = tf.reduce_sum(tf.cast(
        tf.logical_and(real, tf.equal(predictions, features["targets"])),
        tf.float32))
    return loss_sum, tokens, correct

  def train_step(self, features):
    """One update; returns (mean smoothed loss per token, token count)."""
    loss, tokens = self._train_step(features)
    return float(loss), float(tokens)

  def evaluate(self, dataset):
    """Unsmoothed loss, per-token perplexity and accuracy over ``dataset``."""
    loss_sum = tokens = correct = 0.0
    for features in dataset:
      l, n, c = self._eval_step(features)
      loss_sum, tokens, correct = (loss_sum + float(l), tokens + float(n),
                                   correct + float(c))
    loss = loss_sum / max(tokens, 1.0)
    return {"loss": loss, "perplexity": math.exp(min(loss, 50.0)),
            "accuracy": correct / max(tokens, 1.0)}

  def fit(self, dataset, train_steps, log_every=100, save_every=None,
          log=log_line, total_steps=None):
    """Trains until ``train_steps`` updates have been applied in total
    (counting those restored from a checkpoint); progress lines show
    ``total_steps`` (default ``train_steps``) as the goal."""
    total_steps = total_steps or train_steps
    iterator = iter(dataset)
    start = time.time()
    tokens_since = 0.0
    while self.step < train_steps:
      loss, tokens = self.train_step(next(iterator))
      if not math.isfinite(loss):
        raise FloatingPointError(
            f"loss became {loss} at step {self.step}; the last good "
            "checkpoint is kept in the output directory")
      tokens_since += tokens
      step = self.step
      if step % log_every == 0 or step == train_steps:
        elapsed = time.time() - start
        log(f"step {step}/{total_steps}  loss {loss:.4f}  "
            f"{tokens_since / max(elapsed, 1e-9):.0f} tokens/s")
        start, tokens_since = time.time(), 0.0
      if save_every and step % save_every == 0:
        self.save()
    self.save()
    return self.step


def save_run_config(output_dir, hparams, flags=None):
  """Writes hparams.json (and flags.txt) into ``output_dir``."""
  os.makedirs(output_dir, exist_ok=True)
  hparams.save(os.path.join(output_dir, "hparams.json"))
  if flags:
    with open(os.path.join(output_dir, "flags.txt"), "w",
              encoding="utf-8") as f:
      f.write("\n".join(f"--{k}={v}" for k, v in sorted(flags.items())) + "\n")
