"""R-Drop (training.rdrop): the loss against one written out in NumPy,
the plain loss where dropout is off, the hparams that refuse it, and a run
that trains with it."""

import numpy as np
import pytest
import tensorflow as tf

from conftest import TINY_RUN
from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.training.objective import Softmax, objective_from_hparams
from t2t_keras.training.rdrop import RDrop, symmetric_kl
from t2t_keras.training.run import RunConfig, train

VOCAB = 7


class _TwoPasses:
  """A stand-in model: the first copy of the stacked batch gets
  ``logits`` and the second ``logits + noise``, as two dropout masks
  would give."""

  def __init__(self, logits, noise):
    self.logits, self.noise = logits, noise
    self.seen = None

  def training_logits(self, features):
    self.seen = features
    return tf.concat([self.logits, self.logits + self.noise], 0)


def _log_softmax(z):
  z = z - z.max(-1, keepdims=True)
  return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _smoothed(z, targets, eps):
  log_p = _log_softmax(z)
  true = np.take_along_axis(log_p, targets[..., None], -1)[..., 0]
  return -(1 - eps) * true - eps * log_p.mean(-1)


def test_the_loss_is_the_papers_halved():
  rng = np.random.default_rng(0)
  logits = rng.normal(size=(2, 4, VOCAB)).astype(np.float32)
  noise = rng.normal(size=(2, 4, VOCAB)).astype(np.float32)
  targets = np.array([[3, 4, 1, 0], [2, 1, 0, 0]], np.int32)
  features = {"inputs": tf.constant([[5, 1], [6, 1]]),
              "targets": tf.constant(targets)}
  model = _TwoPasses(tf.constant(logits), tf.constant(noise))
  loss_sum, tokens = RDrop(Softmax(), 5.0).loss(model, features, 0.1)
  # The model saw every feature twice over.
  assert model.seen["inputs"].shape == (4, 2)
  np.testing.assert_array_equal(model.seen["targets"].numpy()[2:], targets)
  real = targets != 0
  log_p, log_q = _log_softmax(logits), _log_softmax(logits + noise)
  kl_pq = (np.exp(log_p) * (log_p - log_q)).sum(-1)
  kl_qp = (np.exp(log_q) * (log_q - log_p)).sum(-1)
  per_token = ((_smoothed(logits, targets, 0.1)
                + _smoothed(logits + noise, targets, 0.1)) / 2
               + 5.0 / 4 * (kl_pq + kl_qp))
  assert float(tokens) == real.sum() == 5
  np.testing.assert_allclose(float(loss_sum), per_token[real].sum(),
                             rtol=1e-5)
  np.testing.assert_allclose(
      symmetric_kl(tf.constant(logits), tf.constant(logits + noise)).numpy(),
      kl_pq + kl_qp, rtol=1e-5, atol=1e-6)


def test_without_dropout_it_is_the_plain_loss(trained_run):
  data, out = trained_run
  from t2t_keras.models.builder import load_model_from_dir
  model, hparams, _, _ = load_model_from_dir(out)
  for layer in model._flatten_layers():
    if hasattr(layer, "rate"):
      layer.rate = 0.0
  problem = registry.problem("translate_synthetic")
  features = next(iter(problem.batches("train", data, hparams, seed=1)))
  features = {k: tf.cast(v, tf.int32) for k, v in features.items()}
  plain, tokens = Softmax().loss(model, features, 0.1)
  rdrop, rdrop_tokens = RDrop(Softmax(), 5.0).loss(model, features, 0.1)
  assert float(tokens) == float(rdrop_tokens) > 0
  np.testing.assert_allclose(float(rdrop), float(plain), rtol=2e-3)


def test_rdrop_by_hparams():
  hparams = registry.hparams("transformer_tiny")
  assert isinstance(objective_from_hparams(hparams), Softmax)
  hparams.rdrop_alpha = 5.0
  objective = objective_from_hparams(hparams)
  assert isinstance(objective, RDrop) and objective.alpha == 5.0
  hparams.alignment_loss_weight = 0.5
  with pytest.raises(UserError, match="rdrop_alpha=5.0 works without"):
    objective_from_hparams(hparams)
  hparams.alignment_loss_weight = 0.0
  with pytest.raises(UserError, match="must be > 0"):
    RDrop(Softmax(), -1.0)


def test_a_run_trains_with_it(trained_run, tmp_path):
  data, _ = trained_run
  lines = []
  metrics = train(RunConfig(
      "translate_synthetic", "transformer_tiny", str(tmp_path / "run"),
      data_dir=data, train_steps=40, eval_bleu=False, eval_steps=2,
      hparams_overrides=TINY_RUN + ",rdrop_alpha=5"), log=lines.append)
  # The dev loss a token falls well below a uniform guess over the
  # synthetic vocabulary's pieces at random weights.
  vocab = registry.problem("translate_synthetic").vocab(data).size
  assert metrics["loss"] < 0.8 * np.log(vocab), (metrics, lines)
