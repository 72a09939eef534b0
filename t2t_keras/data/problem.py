"""The base class of registered problems.

A problem knows its vocabulary sizes and yields examples as dicts of 1-D
int64 tensors ``{"inputs": [source_length], "targets": [target_length]}``,
each ending in EOS (id 1); id 0 is padding.
"""

from t2t_keras.data import pipeline

SPLITS = ("train", "dev", "test")


class Problem:
  """Base class. Subclasses implement ``vocab_sizes`` and ``examples``."""

  @property
  def name(self):
    return getattr(type(self), "registered_name", type(self).__name__)

  def vocab_sizes(self, data_dir):
    """(input_vocab_size, target_vocab_size)."""
    raise NotImplementedError

  def examples(self, split, data_dir, seed=None, input_context=None):
    """An unbatched tf.data.Dataset of example dicts for ``split``;
    ``input_context`` (tf.distribute.InputContext) shards it per worker."""
    raise NotImplementedError

  def batches(self, split, data_dir, hparams, seed=None, input_context=None):
    """Batches of about ``hparams.batch_size`` tokens, grouped by length.

    Training batches are shuffled (seeded), repeat forever and drop examples
    longer than ``hparams.max_length``; dev and test batches are one pass.
    """
    if split not in SPLITS:
      raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    examples = self.examples(split, data_dir, seed=seed,
                             input_context=input_context)
    return pipeline.batch_by_tokens(
        examples, hparams.batch_size, hparams.max_length,
        training=split == "train", seed=seed)
