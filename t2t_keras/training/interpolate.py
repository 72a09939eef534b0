"""What t2t-avg-all --interpolate runs: a fine-tuned run's weights moved
back toward the weights it started from (weight-space ensembling: Wortsman
et al. 2022, "Robust fine-tuning of zero-shot models", WiSE-FT):

    w = (1 - alpha) * w_start + alpha * w_tuned

w_tuned: the run's best checkpoint (RUN/best; its last without one);
w_start: its warm start's weights, made again from the run's model.json as
t2t-trainer made them (``--warm_start_from``, and with
``--warm_start_vocab=map`` the rows carried over piece by piece). alpha 1
is the fine-tuned model, 0 the start. A start that changed since (a source
averaged again) gives other weights: interpolate before moving it.
"""

import os
import types

import numpy as np
import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras import registry
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.io.logs import log_line
from t2t_keras.models.builder import build_model_from_dir
from t2t_keras.training import warm_start
from t2t_keras.training.average import save_as_run
from t2t_keras.training.best import BEST_DIR
from t2t_keras.training.checkpoints import step_of


def interpolate_with_start(model_dir, alpha, output_dir=None, log=log_line):
  """Writes ``(1 - alpha) * start + alpha * tuned`` of the warm-started run
  in ``model_dir`` as a checkpoint in ``output_dir`` (default
  ``<model_dir>/interpolated``), loadable as a run. Returns its path."""
  alpha = float(alpha)
  if not 0.0 <= alpha <= 1.0:
    raise UserError(f"--interpolate={alpha}: expected a weight in [0, 1] "
                    "(1: the fine-tuned run, 0: the weights it started from)")
  model, hparams, spec = build_model_from_dir(model_dir)
  flags = spec.get("flags", {})
  started = spec.get("warm_start") or {          # runs before it was kept
      "from": flags.get("warm_start_from"),
      "vocab": flags.get("warm_start_vocab")}
  source = started["from"]
  if not source:
    raise UserError(f"{model_dir} did not start from another run (its "
                    "model.json records no warm start): --interpolate "
                    "blends a fine-tuned run with the weights it started from")
  tuned_path = _tuned_checkpoint(model_dir)
  checkpoint_io.restore(tf.train.Checkpoint(model=model), tuned_path)
  tuned = [np.asarray(v.numpy(), np.float64) for v in model.weights]
  data_dir = spec.get("data_dir") or flags.get("data_dir")
  problem = registry.problem(spec["problem"]).for_data(data_dir)
  planned = warm_start.plan(source, spec, hparams,
                            started["vocab"] or "same", problem, data_dir)
  warm_start.warm_start(types.SimpleNamespace(model=model), planned)
  for variable, end in zip(model.weights, tuned):
    start = np.asarray(variable.numpy(), np.float64)
    variable.assign(((1.0 - alpha) * start + alpha * end)
                    .astype(variable.dtype))
  path = save_as_run(model, hparams, model_dir,
                     output_dir or os.path.join(model_dir, "interpolated"),
                     step_of(tuned_path))
  log(f"interpolated {alpha:g} x {tuned_path} + {1.0 - alpha:g} x its start "
      f"({planned.path}) into {path}")
  return path


def _tuned_checkpoint(model_dir):
  for folder in (os.path.join(model_dir, BEST_DIR), model_dir):
    path = (checkpoint_io.newest_readable(folder)
            if os.path.isdir(folder) else None)
    if path:
      return path
  raise MissingFileError(f"no checkpoint in {model_dir} or {model_dir}/best")
