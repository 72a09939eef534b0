"""The base class of registered problems.

A problem knows its vocabulary sizes and yields examples as dicts of 1-D
int64 tensors ``{"inputs": [source_length], "targets": [target_length]}``,
each ending in EOS (id 1); id 0 is padding.
"""

import tensorflow as tf

SPLITS = ("train", "dev", "test")


class Problem:
  """Base class. Subclasses implement ``vocab_sizes`` and ``examples``."""

  @property
  def name(self):
    return getattr(type(self), "registered_name", type(self).__name__)

  def vocab_sizes(self, data_dir):
    """(input_vocab_size, target_vocab_size)."""
    raise NotImplementedError

  def examples(self, split, data_dir, seed=None):
    """An unbatched tf.data.Dataset of example dicts for ``split``."""
    raise NotImplementedError

  def batches(self, split, data_dir, hparams, seed=None, repeat=None):
    """Padded batches of about ``hparams.batch_size`` tokens.

    Examples longer than ``hparams.max_length`` are dropped from training
    (as in tensor2tensor); the number of sentences in a batch is
    ``batch_size // max_length`` of the batch's longest side.
    """
    if split not in SPLITS:
      raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    dataset = self.examples(split, data_dir, seed=seed)
    max_length = hparams.max_length
    if split == "train" and max_length:
      dataset = dataset.filter(lambda ex: tf.logical_and(
          tf.size(ex["inputs"]) <= max_length,
          tf.size(ex["targets"]) <= max_length))
    if repeat if repeat is not None else split == "train":
      dataset = dataset.repeat()
    sentences = max(1, hparams.batch_size // max(1, max_length))
    padded = {"inputs": [None], "targets": [None]}
    return dataset.padded_batch(sentences, padded_shapes=padded).prefetch(2)
