"""What t2t-avg-all runs: the mean of the last N checkpoints (section 6.1:
the base models average the last 5, the big models the last 20)."""

import os

import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.io import files
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line
from t2t_keras.models.builder import build_model_from_dir
from t2t_keras.training.checkpoints import (average_into, last_checkpoints,
                                            step_of)


def average_checkpoints(model_dir, output_dir=None, n=5, log=log_line,
                        last_step=None):
  """Writes the element-wise mean of the model weights of ``model_dir``'s
  last ``n`` checkpoints (at or before ``last_step`` if given: what a run
  stopped there would have averaged) as a checkpoint in ``output_dir`` (default
  ``<model_dir>/avg``), with hparams.json and model.json beside it so the
  decoder and exporter load it like any other run. Returns its path."""
  output_dir = output_dir or os.path.join(model_dir, "avg")
  model, hparams, spec = build_model_from_dir(model_dir)
  for _ in range(20):   # a trainer saving faster than this reads
    paths = last_checkpoints(model_dir, n, last_step)
    try:
      average_into(model, paths)
      break
    except checkpoint_io.UnreadableCheckpoint as e:
      if not checkpoint_io.deleted_by_trainer(e.path, model_dir):   # damaged
        after = len(paths) - 1 - paths.index(e.path)
        raise UserError(f"{e}; " + (
            f"--n={after} averages the {after} checkpoint(s) after it"
            if after else "move it aside (the trainer does so when it "
            "resumes) to average the others")) from None
      log(f"{e.path} was deleted while it was read (a trainer keeps only "
          "its last checkpoints); averaging the last ones again")
  else:
    raise UserError(f"the checkpoints of {model_dir} were all deleted while "
                    "they were read")
  if len(paths) < n:
    why = "" if last_step is None else (
        f" at or before step {last_step} (the run keeps its last few)")
    log(f"only {len(paths)} checkpoint(s) in {model_dir}{why}; averaging "
        "those")
  del spec
  path = save_as_run(model, hparams, model_dir, output_dir,
                     step_of(paths[-1]))
  log(f"averaged {', '.join(os.path.basename(p) for p in paths)} into {path}")
  return path


def save_as_run(model, hparams, model_dir, output_dir, step):
  """Writes ``model``'s weights as checkpoint ``step`` in ``output_dir``,
  with ``model_dir``'s hparams.json and model.json beside it, so that the
  decoder and exporter load it as a run. Returns the checkpoint's path."""
  os.makedirs(output_dir, exist_ok=True)
  hparams.save(os.path.join(output_dir, "hparams.json"))
  with open(os.path.join(model_dir, "model.json"), "rb") as src:
    files.write_atomic(os.path.join(output_dir, "model.json"), src.read())
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model),
                                       output_dir, max_to_keep=1)
  return checkpoint_io.save(manager, step)
