"""Learning-rate schedules as products of registered factors."""

import pytest

from t2t_keras import registry
from t2t_keras.hparams import HParams
from t2t_keras.training.optimizer import optimizer_from_hparams
from t2t_keras.training.schedule import FactorSchedule, schedule_from_hparams


def rate(schedule, step, lr=1.0, warmup=4000, hidden=512, decay=20000):
  """The schedule at 1-based update ``step`` (Keras passes step - 1)."""
  return float(FactorSchedule(schedule, lr, warmup, hidden, decay)(step - 1))


@pytest.mark.parametrize("step", [1, 100, 4000, 4001, 50000])
def test_paper_is_the_product_of_its_factors(step):
  expected = 512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5)
  assert rate("paper", step) == pytest.approx(expected, rel=1e-6)
  assert rate("constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size",
              step) == pytest.approx(expected, rel=1e-6)


def test_decays_reach_zero_at_decay_steps():
  for name in ("cosine_decay", "linear_decay"):
    assert rate(name, 4000) == pytest.approx(1.0)
    assert rate(name, 20000) == pytest.approx(0.0, abs=1e-7)
    assert rate(name, 30000) == pytest.approx(0.0, abs=1e-7)
  assert rate("cosine_decay", 12000) == pytest.approx(0.5, abs=1e-6)
  assert rate("linear_decay", 8000) == pytest.approx(0.75, abs=1e-6)
  # Composed with the paper's: the same warm-up, then down to 0.
  assert rate("paper*cosine_decay", 2000) == pytest.approx(rate("paper",
                                                                2000))
  assert rate("paper*cosine_decay", 20000) == pytest.approx(0, abs=1e-9)


def test_inverse_sqrt_peaks_at_the_learning_rate():
  assert rate("inverse_sqrt", 4000, lr=5e-3) == pytest.approx(5e-3)
  assert rate("inverse_sqrt", 16000, lr=5e-3) == pytest.approx(2.5e-3)
  assert rate("inverse_sqrt", 1000, lr=5e-3) == pytest.approx(1.25e-3)


def test_unknown_factor_is_one_line_with_close_names():
  with pytest.raises(registry.RegistryError, match="cosine_decay"):
    FactorSchedule("paper*cosin_decay", 1.0, 10, 8, 100)
  with pytest.raises(Exception, match="joined by"):
    FactorSchedule("paper**x", 1.0, 10, 8, 100)


def test_decays_end_at_the_runs_train_steps():
  hparams = HParams(optimizer="adam", optimizer_adam_beta1=0.9,
                    optimizer_adam_beta2=0.98, optimizer_adam_epsilon=1e-9,
                    learning_rate_schedule="constant*linear_decay",
                    learning_rate=2.0, learning_rate_warmup_steps=0,
                    learning_rate_decay_steps=0, hidden_size=8,
                    train_steps=1000)
  schedule = schedule_from_hparams(hparams, train_steps=100)
  assert float(schedule(49)) == pytest.approx(1.0)   # update 50 of 100
  hparams.learning_rate_decay_steps = 200
  schedule = schedule_from_hparams(hparams, train_steps=100)
  assert float(schedule(99)) == pytest.approx(1.0)   # update 100 of 200
  optimizer = optimizer_from_hparams(hparams, train_steps=100)
  assert float(optimizer.learning_rate) == pytest.approx(2.0 * (1 - 1 / 200))
