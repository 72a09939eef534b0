"""Train a registered model on a registered problem: what t2t-trainer runs."""

import os

import keras

from t2t_keras import registry
from t2t_keras.logs import log_line
from t2t_keras.hparams import HParams
from t2t_keras.training.trainer import Trainer, save_run_config


def resolve_hparams(hparams_set, overrides="", output_dir=None):
  """The hparams set with ``overrides`` applied.

  When ``output_dir`` already holds an hparams.json from an earlier run of
  the same command, its values must agree: resuming with other hparams
  would silently train a different model.
  """
  hparams = registry.hparams(hparams_set).parse(overrides)
  saved = output_dir and os.path.join(output_dir, "hparams.json")
  if saved and os.path.exists(saved):
    previous = HParams.load(saved)
    changed = sorted(k for k, v in hparams.values().items()
                     if previous.get(k) != v)
    if changed:
      raise ValueError(
          f"{saved} was written with other hparams ({', '.join(changed)} "
          "differ); use a new --output_dir or the same --hparams")
  return hparams


def train(problem_name, hparams_set, output_dir, train_steps=None,
          hparams_overrides="", model_name="transformer", data_dir=None,
          eval_every=None, keep_checkpoint_max=5, seed=1234, log=log_line,
          flags=None):
  """Builds, trains (resuming from ``output_dir``) and evaluates on dev.

  ``seed`` fixes the initial weights, dropout and the training data order.
  Returns the dev metrics dict of the last evaluation.
  """
  keras.utils.set_random_seed(seed)
  problem = registry.problem(problem_name)
  hparams = resolve_hparams(hparams_set, hparams_overrides, output_dir)
  train_steps = train_steps or hparams.train_steps
  save_run_config(output_dir, hparams, flags)
  input_vocab, target_vocab = problem.vocab_sizes(data_dir)
  model = registry.model(model_name)(hparams, input_vocab, target_vocab)
  model.build()
  trainer = Trainer(model, hparams, output_dir, keep_checkpoint_max)
  restored = trainer.restore()
  if restored:
    log(f"resumed from {restored} at step {trainer.step}")
  log(f"training {model_name}/{hparams_set} on {problem_name}: "
      f"{model.count_params():,} parameters, {train_steps} steps")
  train_data = problem.batches("train", data_dir, hparams, seed=seed)
  dev_data = problem.batches("dev", data_dir, hparams)
  eval_every = eval_every or train_steps
  metrics = None
  while trainer.step < train_steps:
    target = min(train_steps, (trainer.step // eval_every + 1) * eval_every)
    trainer.fit(train_data, target, log_every=max(1, min(100, eval_every)),
                log=log, total_steps=train_steps)
    metrics = trainer.evaluate(dev_data)
    log(f"step {trainer.step}: dev loss {metrics['loss']:.4f}  "
        f"perplexity {metrics['perplexity']:.3f}  "
        f"accuracy {metrics['accuracy']:.3f}")
  if metrics is None:
    metrics = trainer.evaluate(dev_data)
  return metrics
