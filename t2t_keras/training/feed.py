"""The training batches of this worker, fed to its replicas, and where the
stream stands, saved beside every checkpoint so a resumed run continues it
at once.

``distribute_datasets_from_function`` hands a worker's batches to its local
replicas in turn through a multi-device iterator, which TensorFlow cannot
checkpoint. ``TrainingFeed`` does the same from a plain tf.data iterator
over this worker's input pipeline (one per worker, as tf.distribute makes
them): each update's micro-batch takes the next ``local replicas`` batches,
the first to the first replica, and so on. A tf.data iterator's state
(the shuffle buffer, the partly filled length buckets, what was prefetched)
checkpoints exactly, so ``DataPosition`` writes it at each checkpoint's
step, as ``RUN/data/pipeline-I-of-N/ckpt-STEP``, before the checkpoint
itself, and on a multi-worker run every worker's before the chief's: a
checkpoint that is listed always has every pipeline's position. Resuming
reads the position of the restored step; its cost does not grow with the
step.
A run resumed on another number of workers (input pipelines) finds no
position of its own (``others`` names the layout saved) and starts a new
order, seeded by the step, at once; a checkpoint without any (written
before positions were kept) resumes by re-reading the batches its updates
used (``skip``); each said in one line.
"""

import glob
import os

import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.io import files
from t2t_keras.training.strategy import num_workers, worker_index

DATA_DIR = "data"


def _pipelines():
  """(this worker's input pipeline id, the number of pipelines): one per
  worker, as ``distribute_datasets_from_function`` makes them."""
  workers = num_workers()
  return (worker_index(), workers) if workers > 1 else (0, 1)


class TrainingFeed:
  """Batches from ``dataset_fn(input_context)`` to the replicas of this
  worker. Iterating gives a value for ``strategy.run``: the batch itself
  with one replica, else a dict of per-replica batches.

  Args:
    strategy: the run's tf.distribute strategy.
    dataset_fn: ``(input_context, seed)`` -> a dataset of
      {"inputs", "targets"} int64 [batch, length] batches.
    seed: the run's data seed.
  """

  def __init__(self, strategy, dataset_fn, seed=None):
    self.strategy = strategy
    self.dataset_fn = dataset_fn
    self.seed = seed
    self.pipeline_id, self.num_pipelines = _pipelines()
    self.distributed = strategy.num_replicas_in_sync > 1 or \
        self.num_pipelines > 1
    self.local_replicas = (len(strategy.extended.worker_devices)
                           if self.distributed else 1)
    self.context = tf.distribute.InputContext(
        self.num_pipelines, self.pipeline_id,
        strategy.num_replicas_in_sync)
    self.iterator = None
    self.element_spec = None

  def start(self, skip_batches=0, seed=None):
    """Makes the iterator; ``skip_batches``: batches of this pipeline to
    read past first (the old way of resuming); ``seed``: another order than
    the run's seed gives."""
    dataset = self.dataset_fn(self.context,
                              self.seed if seed is None else seed)
    if skip_batches:
      dataset = dataset.skip(skip_batches)
    self.iterator = iter(dataset)
    self.element_spec = dataset.element_spec
    if self.distributed:
      # The spec tf.function sees: a per-replica value of unknown shapes,
      # as a distributed dataset of this pipeline would give.
      self.element_spec = self.strategy.distribute_datasets_from_function(
          lambda _: dataset).element_spec
    return self

  def close(self):
    """Drops the iterator now. Left to the garbage collector (a finished
    run's trainer sits in reference cycles), a tf.data iterator's deletion
    waits for its autotuning thread's sleep, up to a minute, wherever the
    collection happens to run."""
    self.iterator = None

  def __iter__(self):
    return self

  def __next__(self):
    if not self.distributed:
      return next(self.iterator)
    batches = [next(self.iterator) for _ in range(self.local_replicas)]
    return self.strategy.experimental_distribute_values_from_function(
        lambda ctx: batches[ctx.replica_id_in_sync_group %
                            self.local_replicas])

  def batches_per_update(self, accumulation):
    """Batches of this pipeline one update uses."""
    return accumulation * self.local_replicas


class DataPosition:
  """Saves and restores a ``TrainingFeed``'s iterator state beside the
  checkpoints of ``run_dir``, keeping the positions of the steps whose
  checkpoints are kept (``keep_steps``)."""

  def __init__(self, run_dir, feed):
    self.feed = feed
    self.directory = os.path.join(
        run_dir, DATA_DIR,
        f"pipeline-{feed.pipeline_id}-of-{feed.num_pipelines}")

  def path(self, step):
    return os.path.join(self.directory, f"ckpt-{step}")

  def save(self, step, directory, latest):
    """Writes the position after update ``step``: the first part of
    checkpoint ``step`` of ``directory``, whose newest is ``latest``
    (``SaveFailed`` on a failed write, as for the checkpoint itself, its
    partial files removed)."""
    os.makedirs(self.directory, exist_ok=True)
    path = self.path(step)
    try:
      tf.train.Checkpoint(iterator=self.feed.iterator).write(path)
    except checkpoint_io.WRITE_ERRORS as e:
      for name in checkpoint_io.files_of(path):
        files.remove(name)
      files.remove_tree(path + "_temp")
      raise checkpoint_io.save_failed(step, directory, e, latest) from None

  def prune(self, keep_steps):
    """Removes the positions of steps not in ``keep_steps``."""
    for index in glob.glob(os.path.join(glob.escape(self.directory),
                                        "ckpt-*.index")):
      prefix = index[:-len(".index")]
      try:
        step = int(prefix.rsplit("-", 1)[1])
      except ValueError:
        continue
      if step not in keep_steps:
        for name in checkpoint_io.files_of(prefix):
          files.remove(name)

  def others(self, step):
    """The numbers of pipelines (sorted) that saved a position at ``step``
    in another layout than this feed's."""
    parent = os.path.dirname(self.directory)
    found = set()
    for index in glob.glob(os.path.join(glob.escape(parent), "pipeline-*-of-*",
                                        f"ckpt-{step}.index")):
      count = os.path.basename(os.path.dirname(index)).rsplit("-", 1)[1]
      if count.isdigit() and int(count) != self.feed.num_pipelines:
        found.add(int(count))
    return sorted(found)

  def restore(self, step):
    """Starts the feed at the position saved with ``step``; returns whether
    one was found and read (else the feed is not started)."""
    path = self.path(step)
    if not checkpoint_io.files_of(path):
      return False
    self.feed.start()
    try:
      tf.train.Checkpoint(iterator=self.feed.iterator).read(
          path).assert_consumed()
    except checkpoint_io.READ_ERRORS + (AssertionError,):
      return False
    return True
