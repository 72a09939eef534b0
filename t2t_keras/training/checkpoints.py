"""Checkpoints: when to save, how many to keep, resuming, averaging.

TensorFlow writes a checkpoint's files under temporary names, renames them
when complete, and only then rewrites the ``checkpoint`` index file
atomically; a process killed in the middle of a save leaves the previous
checkpoint as the latest, loadable one (tests/test_resume.py kills one).
A checkpoint damaged afterwards (cut short, its index gone) is skipped when
resuming: its files move to ``RUN/unreadable/`` and the newest one that
reads is restored (``t2t_keras.io.checkpoint_io``); a save that fails (a full
disk) stops with one line and leaves no partial files.
"""

import os
import time

import numpy as np
import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.errors import MissingFileError
from t2t_keras.io.logs import log_line
from t2t_keras.training.cluster import ANY
from t2t_keras.training.config import CheckpointPolicy


class Checkpointer:
  """Saves ``objects`` (tf.train.Checkpoint's) as ``policy`` (a
  ``CheckpointPolicy``) says; with ``directory`` None it does nothing.
  ``shared_dir``: for a multi-worker run's other workers, the chief's run
  directory (``directory`` is then the worker's temporary one)."""

  def __init__(self, directory, policy=CheckpointPolicy(), shared_dir=None,
               **objects):
    self.directory = directory
    self.shared_dir = shared_dir
    self.every_steps = policy.every_steps
    self.every_secs = policy.every_secs
    self.checkpoint = tf.train.Checkpoint(**objects)
    self.manager = None
    if directory:
      self.manager = tf.train.CheckpointManager(
          self.checkpoint, directory, max_to_keep=policy.keep)
    self.keep = policy.keep
    self.position = None   # a feed.DataPosition saved with each checkpoint
    self.cluster = None    # a multi-worker run's cluster.Cluster
    self.before_save = None  # called before each save (the loss check)
    self._last_time = time.time()
    self._last_step = None

  def share_with(self, cluster):
    """On a multi-worker run: saves by the clock are decided with every
    worker of ``cluster`` (``training.cluster``), and a save waits until
    every worker has written its data position."""
    self.cluster = cluster
    cluster.ballot("save_due", ANY)

  @property
  def latest(self):
    return self.manager.latest_checkpoint if self.manager else None

  def restore(self, log=log_line, run_dir=None, source_dir=None):
    """Loads the newest checkpoint that reads, if any; returns its path.
    Each one that does not read is moved to ``<run_dir>/unreadable/``
    (default: the checkpoint directory's) with a line to ``log``; a damaged
    ``checkpoint`` state file is rebuilt from the checkpoints found.

    ``source_dir``: read the checkpoints of that directory instead, moving
    nothing (a multi-worker run's other workers restore the chief's: the
    chief makes the same choice and does the moving)."""
    if source_dir is not None:
      for path in reversed(checkpoint_io.listed(source_dir)):
        try:
          checkpoint_io.restore(self.checkpoint, path)
          return path
        except checkpoint_io.UnreadableCheckpoint:
          continue
      return None
    if self.manager and checkpoint_io.state_damaged(self.directory):
      found = checkpoint_io.rebuild_state(self.directory)
      self._new_manager()
      log(f"{os.path.join(self.directory, 'checkpoint')} was damaged; "
          f"rebuilt it from the {len(found)} checkpoint(s) found beside it")
    while self.latest:
      bad = self.latest
      try:
        checkpoint_io.restore(self.checkpoint, bad)
        return bad
      except checkpoint_io.UnreadableCheckpoint as e:
        moved = checkpoint_io.move_aside(bad, run_dir or self.directory)
        self._new_manager()
        log(f"skipped {bad}: it does not read ({e.reason}); moved its "
            f"files to {moved}; " + (f"resuming from {self.latest}" if
                                     self.latest else "no checkpoint left "
                                     "that reads: starting from step 0"))
    return None

  def drop_from(self, step):
    """Moves the checkpoints of ``step`` and later to ``unreadable/`` beside
    them (a non-finite loss was computed at their weights); returns where,
    or None when there were none."""
    if not self.manager:
      return None
    moved = None
    for path in checkpoint_io.listed(self.directory):
      if step_of(path) >= step:
        moved = checkpoint_io.move_aside(path, self.directory)
    if moved:
      self._new_manager()
    return moved

  def _new_manager(self):
    """A manager that reads the state file again."""
    self.manager = tf.train.CheckpointManager(
        self.checkpoint, self.directory, max_to_keep=self.keep)

  def save(self, step):
    """Saves after update ``step`` (the data position first, when there is
    one, on every worker: a listed checkpoint always has every worker's
    position); its path. Another worker of a multi-worker run
    (``shared_dir`` set) writes its data position only: the chief's
    checkpoint is the run's, every worker holds the same state (checked
    when the run starts and ends), and nothing would read a worker's copy.
    TensorFlow's save of mirrored variables reads each one's local value
    and makes no collective (only SyncOnRead variables, which the
    checkpoint does not hold, would), so the chief saves alone."""
    if not self.manager or step == self._last_step:
      return None
    if self.before_save is not None:
      self.before_save()
    if self.position is not None:
      self.position.save(step, self.directory, self.latest)
      if self.cluster is not None:
        # Every worker has written its position before the chief lists the
        # checkpoint (a worker killed in between leaves none listed).
        self.cluster.barrier()
    path = None if self.shared_dir is not None else \
        checkpoint_io.save(self.manager, step)
    if self.position is not None:
      # The positions of the steps the run's checkpoints keep (the chief's,
      # when this is another worker's temporary directory), and this one.
      kept = self.manager.checkpoints if self.shared_dir is None else \
          checkpoint_io.listed(self.shared_dir)
      self.position.prune({step_of(p) for p in kept} | {step})
    self._last_time, self._last_step = time.time(), step
    return path

  def due(self, step):
    """Whether the policy asks for a checkpoint after update ``step``."""
    due_steps = self.every_steps and step % self.every_steps == 0
    due_secs = bool(self.every_secs and (
        time.time() - self._last_time >= self.every_secs))
    if self.every_secs and self.cluster is not None:
      # Each worker's clock differs: all save when any one's time is up, at
      # the same shared decision.
      self.cluster.vote("save_due", due_secs)
      due_secs = bool(self.cluster.decision("save_due", step))
    return bool(self.manager and (due_steps or due_secs))


def last_checkpoints(model_dir, n, last_step=None):
  """The paths of the last ``n`` checkpoints in ``model_dir``, oldest first;
  with ``last_step``, the last ``n`` of those at or before that step."""
  state = tf.train.get_checkpoint_state(model_dir)
  paths = list(state.all_model_checkpoint_paths) if state else []
  if last_step is not None:
    paths = [p for p in paths if step_of(p) <= last_step]
  if not paths:
    raise MissingFileError(f"no checkpoints in {model_dir}" + (
        f" at or before step {last_step}" if last_step is not None else ""))
  return paths[-n:]


def average_into(model, paths):
  """Sets ``model``'s weights to the element-wise mean of its weights in the
  checkpoints ``paths`` (each saved with ``model=``)."""
  sums = [np.zeros(v.shape, np.float64) for v in model.weights]
  for path in paths:
    checkpoint_io.restore(tf.train.Checkpoint(model=model), path)
    for total, variable in zip(sums, model.weights):
      total += np.asarray(variable.numpy(), np.float64)
  for total, variable in zip(sums, model.weights):
    variable.assign((total / len(paths)).astype(variable.dtype))


def step_of(path):
  """The step number a checkpoint path ends with (ckpt-1200 -> 1200)."""
  return int(os.path.basename(path).rsplit("-", 1)[-1])
