"""The best checkpoint by a validation figure, and early stopping.

``<run>/best/`` holds the model weights of the evaluation with the best
figure (dev BLEU, higher is better, or dev loss, lower is better) as a
TensorFlow checkpoint (``t2t-decoder --checkpoint_path=<run>/best`` and
``t2t-exporter`` read it like any run directory), and ``best.json``: the
figure's name, every evaluation's (step, value), the best one and how many
evaluations have passed without improvement. A resumed run reads
``best.json`` and goes on counting (fairseq's checkpoint_best.pt, Marian's
--early-stopping, OpenNMT-tf's export_on_best). A best checkpoint that no
longer reads is moved to ``<run>/unreadable/`` at start, and the next
evaluation saves a new best.
"""

import json
import os

import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.io import files
from t2t_keras.io import json_files
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line

BEST_DIR = "best"
STATE_FILE = "best.json"


class BestKeeper:
  """Keeps ``model``'s best weights under ``run_dir``/best.

  Args:
    run_dir: the training run's directory.
    model: the model whose weights are saved.
    metric: the figure's name ("bleu", "loss").
    higher_is_better: BLEU yes, loss no.
    patience: stop after this many evaluations without improvement; None or
      0: never stop early.
    write: False on the workers of a multi-worker run that are not the
      chief: they follow the same decisions but write nothing.
    log: where a note about an unreadable best checkpoint goes.
  """

  def __init__(self, run_dir, model, metric, higher_is_better, patience=None,
               write=True, log=log_line):
    self.directory = os.path.join(run_dir, BEST_DIR)
    self.metric, self.higher = metric, higher_is_better
    self.patience, self.write = patience or 0, write
    self.history, self.best, self.best_step, self.stale = [], None, None, 0
    self.restarted = False
    self._checkpoint = tf.train.Checkpoint(model=model)
    self._manager = tf.train.CheckpointManager(
        self._checkpoint, self.directory, max_to_keep=1)
    self._load()
    kept = self._manager.latest_checkpoint
    why = kept and self.best is not None and checkpoint_io.reads(kept)
    if why:
      if write:
        moved = checkpoint_io.move_aside(kept, run_dir)
        self._manager = tf.train.CheckpointManager(
            self._checkpoint, self.directory, max_to_keep=1)
        log(f"skipped the best checkpoint {kept}: it does not read ({why}); "
            f"moved its files to {moved}; the next evaluation keeps a new "
            "best")
      self.best = self.best_step = None

  @property
  def state_path(self):
    return os.path.join(self.directory, STATE_FILE)

  def _load(self):
    state = read_state(self.directory)
    if state is None:
      return
    if state.get("metric") != self.metric:   # kept by another figure
      self.restarted = state.get("metric")
      return
    self.history = [tuple(h) for h in state["history"]]
    self.best, self.best_step = state["best"], state["best_step"]
    self.stale = state["evaluations_since_best"]

  def _better(self, value):
    if self.best is None:
      return True
    return value > self.best if self.higher else value < self.best

  def update(self, step, value):
    """Records the evaluation at ``step``; saves the weights if ``value``
    is the best so far. Returns True when it is."""
    if self.history and self.history[-1][0] == step:
      return False   # evaluated again at a resumed run's last step
    self.history.append((step, value))
    improved = self._better(value)
    if improved:
      self.best, self.best_step, self.stale = value, step, 0
      if self.write:
        checkpoint_io.save(self._manager, step)
    else:
      self.stale += 1
    if self.write:
      self._save_state()
    return improved

  def _save_state(self):
    state = {"metric": self.metric, "higher_is_better": self.higher,
             "best": self.best, "best_step": self.best_step,
             "best_checkpoint": self._manager.latest_checkpoint,
             "evaluations_since_best": self.stale,
             "history": self.history}
    try:
      os.makedirs(self.directory, exist_ok=True)
      files.write_text(self.state_path, json.dumps(state, indent=1))
    except OSError as e:
      raise checkpoint_io.SaveFailed(
          f"could not write {self.state_path} ({e.strerror or e}); the "
          "same command resumes once the cause is fixed") from None

  @property
  def should_stop(self):
    """Whether ``patience`` evaluations have passed without improvement."""
    return bool(self.patience) and self.stale >= self.patience


def read_state(directory):
  """The record ``BestKeeper`` keeps in ``directory`` (a run's best/), or
  None when there is none; a damaged one, or one with a value of the wrong
  type, is a one-line ``UserError`` naming it. The trainer reads it before
  it writes anything."""
  path = os.path.join(directory, STATE_FILE)
  if not os.path.isfile(path):
    return None
  remedy = (f"delete {directory} to keep the best checkpoint anew from the "
            "next evaluation")
  state = json_files.load(
      path, {"metric": str, "history": list, "best": (float, type(None)),
             "best_step": (int, type(None)), "evaluations_since_best": int},
      remedy)
  for i, entry in enumerate(state["history"]):
    json_files.check(path, f"history[{i}]", entry, list, remedy)
    if len(entry) != 2:
      raise UserError(f"{path} is damaged: history[{i}] is {entry}, "
                      f"expected [step, figure]; {remedy}")
    json_files.check(path, f"history[{i}] step", entry[0], int, remedy)
    json_files.check(path, f"history[{i}] figure", entry[1], float, remedy)
  return state
