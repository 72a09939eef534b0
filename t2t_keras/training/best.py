"""The best checkpoint by a validation figure, and early stopping.

``<run>/best/`` holds the model weights of the evaluation with the best
figure (dev BLEU, higher is better, or dev loss, lower is better) as a
TensorFlow checkpoint (``t2t-decoder --checkpoint_path=<run>/best`` and
``t2t-exporter`` read it like any run directory), and ``best.json``: the
figure's name, every evaluation's (step, value), the best one and how many
evaluations have passed without improvement. A resumed run reads
``best.json`` and goes on counting (fairseq's checkpoint_best.pt, Marian's
--early-stopping, OpenNMT-tf's export_on_best).
"""

import json
import os

import tensorflow as tf

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
  """

  def __init__(self, run_dir, model, metric, higher_is_better, patience=None,
               write=True):
    self.directory = os.path.join(run_dir, BEST_DIR)
    self.metric, self.higher = metric, higher_is_better
    self.patience, self.write = patience or 0, write
    self.history, self.best, self.best_step, self.stale = [], None, None, 0
    self.restarted = False
    self._manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), self.directory, max_to_keep=1)
    self._load()

  @property
  def state_path(self):
    return os.path.join(self.directory, STATE_FILE)

  def _load(self):
    if not os.path.isfile(self.state_path):
      return
    with open(self.state_path, encoding="utf-8") as f:
      state = json.load(f)
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
        self._manager.save(checkpoint_number=step)
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
    os.makedirs(self.directory, exist_ok=True)
    partial = self.state_path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
      json.dump(state, f, indent=1)
    os.replace(partial, self.state_path)

  @property
  def should_stop(self):
    """Whether ``patience`` evaluations have passed without improvement."""
    return bool(self.patience) and self.stale >= self.patience

  def describe(self):
    return (f"best dev {self.metric} {self.best:.4g} at step {self.best_step}"
            f" ({self.directory})")
