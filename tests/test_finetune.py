"""Fine-tuning settings (training/finetune.py): L2 toward the source, frozen
parts, and a schedule that continues the source's."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import t2t_keras
from t2t_keras import registry
from t2t_keras.models.precision import dtype_policy
from t2t_keras.training.finetune import SourceL2Hook
from t2t_keras.training.hooks import hooks_from_hparams
from t2t_keras.training.run import RunConfig, train
from t2t_keras.training.schedule import schedule_from_hparams
from t2t_keras.training.trainer import Trainer

SMALL = ("hidden_size=32,filter_size=64,num_hidden_layers=1,batch_size=320,"
         "max_length=16,layer_prepostprocess_dropout=0.0")


def _trainer(overrides):
  hparams = registry.hparams("transformer_tiny").parse(SMALL + overrides)
  problem = registry.problem("copy_sequence")
  trainer = Trainer(lambda: t2t_keras.build_model(
      hparams=hparams, vocab_size=problem.vocab_size), hparams,
                    hooks=hooks_from_hparams(hparams))
  return trainer, problem.batches("train", None, hparams, seed=1)


def _values(variables):
  return {v.path: np.array(v.numpy()) for v in variables}


def _weights_at(trainer, data, *steps):
  """The trainable weights (path -> array) now and after ``fit`` to each
  of ``steps``."""
  seen = [_values(trainer.model.trainable_variables)]
  for step in steps:
    trainer.fit(data, step, log_every=step, log=lambda _: None)
    seen.append(_values(trainer.model.trainable_variables))
  return seen


def test_l2_toward_the_source_is_zero_at_the_start_and_pulls_back():
  trainer, _ = _trainer(",finetune_l2=0.25,optimizer=sgd")
  hook = [h for h in trainer.hooks if isinstance(h, SourceL2Hook)]
  assert len(hook) == 1
  hook = hook[0]
  trainer.begin(restored=False)
  variables = trainer.model.trainable_variables
  assert float(hook.penalty(variables)) == 0.0
  variables[0].assign_add(np.ones(variables[0].shape, "float32"))
  assert float(hook.penalty(variables)) == 0.25 * variables[0].shape.num_elements()
  zeros = [np.zeros(v.shape, "float32") for v in variables]
  grads = hook.adjust_gradients(trainer, zeros, variables)
  # d/dw 0.25 ||w - w0||^2 = 0.5 (w - w0): a descent step moves w to w0.
  np.testing.assert_allclose(grads[0].numpy(), 0.5)
  assert all(not np.any(g.numpy()) for g in grads[1:])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_pull_toward_the_source_is_as_strong_under_float16(dtype):
  """SGD at rate 1, w - w0 = 1 and no gradient from data (an update of
  empty accumulators): the pull 2 * 0.25 * (w - w0) moves w by 0.5 under
  float16's loss scaling as under float32 (it was 1/32768 of that)."""
  with dtype_policy(dtype):
    trainer, _ = _trainer(
        ",finetune_l2=0.25,optimizer=sgd,learning_rate_schedule=constant,"
        f"learning_rate=1.0,gradient_accumulation_steps=2,"
        f"activation_dtype={dtype}")
    trainer.begin(restored=False)
    assert (dtype == "float16") == hasattr(trainer.optimizer,
                                           "dynamic_scale")
    weights = trainer.model.trainable_variables[0]
    moved = np.array(weights.numpy()) + 1.0
    weights.assign(moved)
    trainer._apply_step(tf.constant(trainer.cluster.votes()))
    np.testing.assert_allclose(moved - weights.numpy(), 0.5, rtol=0.01)


def test_a_frozen_part_is_bit_identical_after_training():
  trainer, data = _trainer(",finetune_freeze=embeddings+encoder")
  before, after = _weights_at(trainer, data, 5)
  held = [p for p in before if "_embedding/" in p or "/encoder/" in p]
  moved = [p for p in before if "/decoder/" in p]
  assert held and moved
  for path in held:
    np.testing.assert_array_equal(before[path], after[path], err_msg=path)
  assert all(np.any(before[p] != after[p]) for p in moved)


def test_freezing_for_the_first_steps_only():
  trainer, data = _trainer(",finetune_freeze=decoder,finetune_freeze_steps=3")
  start, third, fifth = _weights_at(trainer, data, 3, 5)
  decoder = [p for p in start if "/decoder/" in p]
  assert all(np.array_equal(start[p], third[p]) for p in decoder)
  assert all(np.any(third[p] != fifth[p]) for p in decoder)


def test_the_continued_schedule_starts_at_the_sources_last_rate(trained_run,
                                                                tmp_path):
  data, source = trained_run
  from conftest import TINY_RUN
  out = str(tmp_path / "tuned")
  lines = []

  def tune(steps, schedule):
    train(RunConfig("translate_synthetic", "transformer_tiny", out,
                    data_dir=data, train_steps=steps,
                    hparams_overrides=TINY_RUN, eval_bleu=False,
                    warm_start_from=source, warm_start_schedule=schedule),
          log=lines.append)
  tune(2, "continue")
  with open(os.path.join(source, "hparams.json"), encoding="utf-8") as f:
    source_hparams = registry.hparams("transformer_tiny").parse("")
    source_hparams.override_from_dict(json.load(f))
  tuned = registry.hparams("transformer_tiny").parse("")
  with open(os.path.join(out, "hparams.json"), encoding="utf-8") as f:
    tuned.override_from_dict(json.load(f))
  assert tuned.learning_rate_step_offset == 120
  last = float(schedule_from_hparams(source_hparams, 120)(119))
  first = float(schedule_from_hparams(tuned, 2)(0))
  # Update 1 of the new run is update 121 of the source's schedule: no
  # second warm-up (the paper's rate at 121 is just under that at 120).
  assert 0.99 * last < first < last, (first, last)
  assert any(l.startswith("--warm_start_schedule=continue: the source's last "
                          "update was step 120") for l in lines), lines
  tune(3, "continue")   # the same command resumes
  assert any(l.startswith("resumed from") for l in lines), lines
  constant = str(tmp_path / "constant")
  train(RunConfig("translate_synthetic", "transformer_tiny", constant,
                  data_dir=data, train_steps=1, hparams_overrides=TINY_RUN,
                  eval_bleu=False, warm_start_from=source,
                  warm_start_schedule="constant=0.5"), log=lambda _: None)
  with open(os.path.join(constant, "hparams.json"), encoding="utf-8") as f:
    saved = json.load(f)
  assert saved["learning_rate_schedule"] == "constant"
  np.testing.assert_allclose(saved["learning_rate"], 0.5 * last, rtol=1e-6)


def test_a_kept_vocabulary_says_how_well_it_spells_the_new_text(tmp_path):
  from t2t_keras.data.text_problem import spelling_report

  class Pieces:   # a vocabulary of letters: "a" 1 piece, "abcd" 4
    def encode(self, word):
      return list(word)
  assert spelling_report(Pieces(), ["a ab abc", "abcd a"]) == (
      "it spells 80.0% of 5 training word occurrences in at most 3 pieces")
  assert spelling_report(Pieces(), []) == "no training words to measure it on"


def test_interpolating_toward_the_start(trained_run, tmp_path):
  """t2t-avg-all --interpolate: alpha 1 is the fine-tuned checkpoint, 0
  the weights it started from (the source's), 0.5 their mean; a run that
  did not start from another is one line."""
  from conftest import TINY_RUN
  import tensorflow as tf
  from t2t_keras.io import checkpoint_io
  from t2t_keras.errors import UserError
  from t2t_keras.models.builder import build_model_from_dir
  from t2t_keras.training.interpolate import interpolate_with_start
  data, source = trained_run
  out = str(tmp_path / "tuned")
  train(RunConfig("translate_synthetic", "transformer_tiny", out,
                  data_dir=data, train_steps=3, hparams_overrides=TINY_RUN,
                  eval_bleu=False, warm_start_from=source),
        log=lambda _: None)

  def weights(path):
    model, _, _ = build_model_from_dir(out)
    checkpoint_io.restore(tf.train.Checkpoint(model=model), path)
    return [np.array(v.numpy()) for v in model.weights]

  start = weights(checkpoint_io.newest_readable(source))
  best = os.path.join(out, "best")     # the run's best, else its last
  tuned = weights((os.path.isdir(best) and checkpoint_io.newest_readable(
      best)) or checkpoint_io.newest_readable(out))
  assert any(np.any(a != b) for a, b in zip(start, tuned))
  for alpha, expect in ((1.0, tuned), (0.0, start),
                        (0.5, [(a + b) / 2 for a, b in zip(start, tuned)])):
    path = interpolate_with_start(out, alpha, str(tmp_path / f"i{alpha}"),
                                  log=lambda _: None)
    for got, want in zip(weights(path), expect):
      np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
  try:
    interpolate_with_start(source, 0.5, str(tmp_path / "none"))
    raise AssertionError("a run without a warm start was interpolated")
  except UserError as e:
    assert "did not start from another run" in str(e)
