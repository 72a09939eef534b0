"""The schedule, the loss, and a tiny model learning the copy task."""

import math

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import t2t_keras
from t2t_keras import registry
from t2t_keras.training.loss import smoothed_cross_entropy
from t2t_keras.training.schedule import FactorSchedule, paper_learning_rate
from t2t_keras.training.trainer import Trainer


@pytest.mark.parametrize("step", [1, 4000, 100000])
def test_learning_rate_is_equation_3(step):
  expected = 512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5)
  assert float(paper_learning_rate(step, 512, 4000)) == pytest.approx(
      expected, rel=1e-6)
  # Keras counts iterations from 0: update `step` sees iterations = step - 1.
  schedule = FactorSchedule("paper", 1.0, 4000, 512, 0)
  assert float(schedule(step - 1)) == pytest.approx(expected, rel=1e-6)


def test_smoothed_loss_by_hand():
  logits = np.array([[[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]]], "float32")
  targets = np.array([[1, 0]])  # the second position is padding
  loss, tokens = smoothed_cross_entropy(logits, targets, 0.1)
  log_p = logits[0, 0] - np.log(np.exp(logits[0, 0]).sum())
  expected = -(0.9 * log_p[1] + 0.1 * log_p.mean())
  assert float(tokens) == 1.0
  assert float(loss) == pytest.approx(expected, rel=1e-5)
  plain, _ = smoothed_cross_entropy(logits, targets, 0.0)
  assert float(plain) == pytest.approx(-log_p[1], rel=1e-5)


def test_smoothed_loss_gradient_by_hand():
  """The loss's own gradient: softmax - (1 - eps) onehot - eps / V on real
  tokens, 0 on padding."""
  rng = np.random.RandomState(0)
  logits = tf.constant(rng.randn(2, 3, 7).astype("float32") * 3)
  targets = np.array([[4, 0, 6], [1, 2, 0]])
  with tf.GradientTape() as tape:
    tape.watch(logits)
    loss, _ = smoothed_cross_entropy(logits, targets, 0.1)
  grad = tape.gradient(loss, logits).numpy()
  z = logits.numpy().astype("float64")
  probs = np.exp(z - z.max(-1, keepdims=True))
  probs /= probs.sum(-1, keepdims=True)
  want = probs - 0.9 * np.eye(7)[targets] - 0.1 / 7
  want *= (targets != 0)[..., None]
  np.testing.assert_allclose(grad, want, atol=1e-6)


COPY_HPARAMS = ("hidden_size=64,filter_size=256,num_hidden_layers=1,"
                "batch_size=640,max_length=16,learning_rate=0.5,"
                "learning_rate_warmup_steps=100")


def test_tiny_model_learns_copy_task():
  hp = registry.hparams("transformer_tiny").parse(COPY_HPARAMS)
  problem = registry.problem("copy_sequence")
  trainer = Trainer(lambda: t2t_keras.build_model(
      hparams=hp, vocab_size=problem.vocab_size), hp)
  dev = problem.batches("dev", None, hp)
  before = trainer.evaluate(dev)
  trainer.fit(problem.batches("train", None, hp), 250, log_every=125)
  after = trainer.evaluate(dev)
  print(f"dev loss {before['loss']:.3f} -> {after['loss']:.3f}, accuracy "
        f"{after['accuracy']:.3f}")
  # Uniform guessing over 12 ids costs ln(12) = 2.48 nats per token.
  assert before["loss"] > 1.5
  assert after["loss"] < 0.25
  assert after["accuracy"] > 0.93
  assert math.isfinite(after["perplexity"])


def test_train_step_does_not_retrace_across_shapes():
  hp = registry.hparams("transformer_tiny").parse(
      "hidden_size=32,filter_size=64")
  trainer = Trainer(lambda: t2t_keras.build_model(hparams=hp, vocab_size=10),
                    hp)
  for batch, length in [(2, 3), (4, 7), (1, 11)]:
    feats = {"inputs": np.full((batch, length), 3, "int64"),
             "targets": np.full((batch, length + 1), 4, "int64")}
    trainer.train_step([feats])
  assert trainer._update_step.experimental_get_tracing_count() == 1
  assert trainer.step == 3
  assert ops.convert_to_numpy(trainer.optimizer.iterations) == 3


def test_fused_adam_is_keras_adam():
  from t2t_keras.kernels.fused_adam import FusedAdam
  import keras
  results = []
  for cls in (keras.optimizers.Adam, FusedAdam):
    w = keras.Variable(np.arange(6, dtype="float32").reshape(2, 3))
    opt = cls(learning_rate=0.01, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    for i in range(3):
      grad = np.random.RandomState(i).randn(2, 3).astype("float32")
      opt.apply_gradients([(tf.constant(grad), w)])
    results.append(w.numpy())
  assert not np.allclose(results[1], np.arange(6).reshape(2, 3))
  np.testing.assert_allclose(results[1], results[0], atol=1e-7)


def test_xla_loss_kernels_equal_the_keras_ops_loss():
  """TensorFlow's fused loss (kernels/loss.py) and the plain keras.ops
  formula give the same values and gradients."""
  from t2t_keras.kernels import loss as loss_kernel
  from t2t_keras.training import loss as loss_module
  rng = np.random.RandomState(1)
  logits = tf.constant(rng.randn(3, 5, 11).astype("float32") * 4)
  targets = tf.constant(rng.randint(0, 11, size=(3, 5)), tf.int32)
  upstream = tf.constant(rng.randn(3, 5).astype("float32"))
  results = []
  for per_token in (loss_module.per_token_loss, loss_kernel.per_token_loss):
    with tf.GradientTape() as tape:
      tape.watch(logits)
      values = per_token(logits, targets, 0.1)
      total = tf.reduce_sum(values * upstream)
    results.append((values.numpy(), tape.gradient(total, logits).numpy()))
  for keras_ops, xla in zip(*results):
    np.testing.assert_allclose(xla, keras_ops, rtol=1e-5, atol=1e-6)
