"""Validation BLEU during training, the best checkpoint and early stopping
(t2t-trainer --eval_bleu, --early_stopping_patience)."""

import gc
import json
import os
import re

import pytest
import tensorflow as tf

from conftest import TINY_RUN
from t2t_keras import registry
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.training.dev_bleu import DevBleu
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras.training.best import BestKeeper
from t2t_keras.training.run import RunConfig, train


def _train(data, out, steps, every, overrides=TINY_RUN, **kwargs):
  lines = []
  metrics = train(RunConfig(
      "translate_synthetic", "transformer_tiny", out, data_dir=data,
      train_steps=steps, eval_every=every, hparams_overrides=overrides,
      eval_bleu_lines=60, **kwargs), log=lines.append)
  return metrics, lines


def _train_freeing_its_iterator(*args, **kwargs):
  """``_train``, and that the run freed its tf.data iterators rather than
  leave them to a collection that waits on their autotuning threads
  (``gc.get_objects`` lists those in unreachable cycles too)."""
  from tensorflow.python.data.ops.iterator_ops import OwnedIterator
  live = lambda: sum(isinstance(o, OwnedIterator) for o in gc.get_objects())
  gc.collect()
  gc.disable()
  try:
    before = live()
    result = _train(*args, **kwargs)
    assert live() == before
  finally:
    gc.enable()
  return result


def _state(out):
  with open(os.path.join(out, "best", "best.json"), encoding="utf-8") as f:
    return json.load(f)


def test_best_checkpoint_has_the_highest_logged_bleu(trained_run, tmp_path):
  data, _ = trained_run
  out = str(tmp_path / "run")
  _, lines = _train(data, out, steps=90, every=30)
  logged = {int(m.group(1)): float(m.group(2)) for m in (
      re.match(r"step (\d+): dev loss .* BLEU ([\d.]+) \(60 sentences",
               line) for line in lines) if m}
  assert sorted(logged) == [30, 60, 90]
  state = _state(out)
  best_step = max(logged, key=logged.get)
  assert state["metric"] == "bleu" and state["best_step"] == best_step
  assert state["best"] == pytest.approx(logged[best_step], abs=0.005)
  assert [s for s, _ in state["history"]] == [30, 60, 90]
  best_dir = os.path.join(out, "best")
  assert tf.train.latest_checkpoint(best_dir).endswith(f"ckpt-{best_step}")
  # Its weights are the ones that scored: they decode to the same BLEU.
  model, _, _, _ = load_model_from_dir(out, best_dir)
  problem = registry.problem("translate_synthetic")
  score, _ = DevBleu(model, problem, data, decode_hparams(), 60)()
  assert score == pytest.approx(state["best"], abs=1e-6)


def test_best_checkpoint_by_chrf(trained_run, tmp_path):
  """--eval_metric=chrf: validation prints and keeps sacreBLEU's chrF, the
  same number sacrebleu.corpus_chrf gives the outputs; parsing refuses
  it in one line."""
  import sacrebleu
  from t2t_keras.errors import UserError
  data, _ = trained_run
  out = str(tmp_path / "run")
  _, lines = _train(data, out, steps=20, every=20, eval_metric="chrf")
  assert any(l.startswith("validation CHRF: 60 dev") for l in lines), lines
  logged = [float(m.group(1)) for m in (
      re.match(r"step 20: dev loss .* CHRF ([\d.]+) \(60 sentences", line)
      for line in lines) if m]
  state = _state(out)
  assert state["metric"] == "chrf" and len(logged) == 1
  assert state["best"] == pytest.approx(logged[0], abs=0.005)
  model, _, _, _ = load_model_from_dir(out)
  problem = registry.problem("translate_synthetic")
  dev = DevBleu(model, problem, data, decode_hparams(), 60, metric="chrf")
  score, outputs = dev()
  assert score == pytest.approx(sacrebleu.corpus_chrf(
      outputs, [dev.references]).score, abs=1e-9)
  assert score == pytest.approx(state["best"], abs=1e-6)
  with pytest.raises(UserError, match="--eval_metric=chrf: parsing_wsj "
                     "validates by f1"):
    DevBleu(model, registry.problem("parsing_wsj"), data, decode_hparams(),
            1, metric="chrf")


def test_patience_stops_the_run_and_resume_remembers(trained_run, tmp_path):
  data, _ = trained_run
  out = str(tmp_path / "run")
  # No learning: every evaluation scores the same, none improves on the
  # first, so patience 2 stops after the third of ten.
  frozen = TINY_RUN + ",learning_rate=0.0"
  _, lines = _train_freeing_its_iterator(
      data, out, steps=100, every=10, overrides=frozen,
      early_stopping_patience=2)
  assert any(l.startswith("stopping early: 2 evaluation(s) without a better "
                          "dev bleu") for l in lines), lines
  assert tf.train.latest_checkpoint(out).endswith("ckpt-30")
  state = _state(out)
  assert state["best_step"] == 10 and state["evaluations_since_best"] == 2
  # The same command again remembers that it stopped.
  metrics, lines = _train_freeing_its_iterator(
      data, out, steps=100, every=10, overrides=frozen,
      early_stopping_patience=2)
  assert metrics is None
  assert any(l.startswith("stopped early before") for l in lines), lines
  assert tf.train.latest_checkpoint(out).endswith("ckpt-30")


def test_best_by_dev_loss_without_bleu(trained_run, tmp_path):
  data, _ = trained_run
  out = str(tmp_path / "run")
  _, lines = _train(data, out, steps=40, every=20, eval_bleu=False)
  assert not any("BLEU" in l for l in lines)
  state = _state(out)
  assert state["metric"] == "loss" and not state["higher_is_better"]
  losses = dict(state["history"])
  assert state["best_step"] == min(losses, key=losses.get)


def test_keeper_counts_and_resumes(tmp_path):
  model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
  model.build((None, 3))
  keeper = BestKeeper(str(tmp_path), model, "loss", higher_is_better=False,
                      patience=2)
  assert [keeper.update(s, v) for s, v in ((1, 3.0), (2, 2.0), (3, 2.5))] \
      == [True, True, False]
  assert (keeper.best, keeper.best_step, keeper.stale) == (2.0, 2, 1)
  assert not keeper.should_stop
  again = BestKeeper(str(tmp_path), model, "loss", higher_is_better=False,
                     patience=2)
  assert (again.best, again.best_step, again.stale) == (2.0, 2, 1)
  assert not again.update(3, 0.1)     # the same step evaluated again
  assert not again.update(4, 2.0)     # equal is no improvement
  assert again.should_stop
  by_bleu = BestKeeper(str(tmp_path), model, "bleu", higher_is_better=True)
  assert by_bleu.restarted == "loss" and by_bleu.best is None
