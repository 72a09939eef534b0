"""Fine-tuning: a new run started from another run's weights."""

import os
import shutil

import pytest

from conftest import TINY_RUN
from t2t_keras.data.datagen import generate
from t2t_keras.errors import UserError
from t2t_keras.training.run import RunConfig, train


def _train(data, out, steps, overrides=TINY_RUN, **config):
  lines = []
  metrics = train(RunConfig("translate_synthetic", "transformer_tiny", out,
                            data_dir=data, train_steps=steps,
                            hparams_overrides=overrides, eval_bleu=False,
                            **config), log=lines.append)
  return metrics, lines


def test_warm_start_begins_with_the_source_weights(trained_run, tmp_path):
  data, source = trained_run
  run = str(tmp_path / "source")
  shutil.copytree(source, run)
  # The source run's dev figures (trained already: evaluation only).
  before, _ = _train(data, run, 120)
  # One update at learning rate 0 changes no weight: the new run's first
  # evaluation is the source's.
  after, log = _train(data, str(tmp_path / "tuned"), 1,
                      TINY_RUN + ",learning_rate=0.0", warm_start_from=run)
  assert any(l.startswith("warm start from") and "fresh optimizer, step 0"
             in l for l in log), log
  assert after["loss"] == pytest.approx(before["loss"], rel=1e-5)
  assert after["accuracy"] == pytest.approx(before["accuracy"], rel=1e-5)
  # Resuming the fine-tuned run works as any other.
  _, again = _train(data, str(tmp_path / "tuned"), 2,
                    TINY_RUN + ",learning_rate=0.0", warm_start_from=run)
  assert any(l.startswith("resumed from") and "new runs only" in l
             for l in again), again


def test_warm_start_refuses_another_shape_or_vocabulary(trained_run,
                                                        tmp_path):
  data, source = trained_run
  with pytest.raises(UserError, match="hidden_size 64 there, 32 here"):
    _train(data, str(tmp_path / "wide"), 1,
           TINY_RUN.replace("hidden_size=64", "hidden_size=32"),
           warm_start_from=source)
  other = str(tmp_path / "data")
  generate("translate_synthetic", other, vocab_size=500, log=lambda _: None)
  with pytest.raises(UserError, match="vocabulary of 600 pieces, this run's "
                     "has 500"):
    _train(other, str(tmp_path / "vocab"), 1, warm_start_from=source)
  assert not os.path.exists(str(tmp_path / "wide" / "ckpt-1.index"))
