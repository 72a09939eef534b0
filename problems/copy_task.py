"""A generated copy task: the target is the input sequence. Needs no data
and no download; a tiny Transformer learns it in a few hundred CPU steps."""

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.data.problem import Problem

_FIRST_SYMBOL = 2  # 0 is padding, 1 is EOS.


@registry.register_problem
class CopySequence(Problem):
  """Random symbol strings of 1..``max_symbols`` symbols, copied.

  ``vocab_size`` ids: padding, EOS and ``vocab_size - 2`` symbols. The dev and
  test splits have fixed seeds, the training stream is endless.
  """

  vocab_size = 12
  max_symbols = 10
  dev_size = 256

  def vocab_sizes(self, data_dir=None):
    return self.vocab_size, self.vocab_size

  def examples(self, split, data_dir=None, seed=None, input_context=None):
    split_seed = {"train": 0, "dev": 1, "test": 2}[split]
    base_seed = (seed or 0) * 3 + split_seed

    def make(index):
      s = tf.stack([tf.cast(base_seed, tf.int64), index])
      length = tf.random.stateless_uniform(
          [], s, 1, self.max_symbols + 1, dtype=tf.int64)
      symbols = tf.random.stateless_uniform(
          [length], s + 1, _FIRST_SYMBOL, self.vocab_size, dtype=tf.int64)
      sequence = tf.concat([symbols, [1]], axis=0)
      return {"inputs": sequence, "targets": sequence}

    indices = (tf.data.Dataset.counter() if split == "train" else
               tf.data.Dataset.range(self.dev_size))
    if input_context is not None:
      indices = indices.shard(input_context.num_input_pipelines,
                              input_context.input_pipeline_id)
    return indices.map(make)
