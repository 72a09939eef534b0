"""The tf.data input pipeline: TFRecord shards -> examples -> batches of
about ``batch_size`` tokens grouped by length (section 5.1: "sentence pairs
were batched together by approximate sequence length").

``batch_size`` counts tokens per replica, padding included, as in
tensor2tensor: an example's length is the longer of its input and target,
examples fall into length buckets whose bounds grow by 10%, and a bucket
with upper bound b batches ``batch_size // b`` examples.
"""

import tensorflow as tf

from t2t_keras.buckets import bucket_boundaries  # also pipeline's name
from t2t_keras.errors import MissingFileError

FEATURES = ("inputs", "targets")
_PARSE_SPEC = {k: tf.io.VarLenFeature(tf.int64) for k in FEATURES}


def encode_example(inputs, targets):
  """Serialized tf.train.Example of two int lists (t2t's record format),
  its map of features in a fixed order: the same data makes the same bytes
  in every process."""
  feature = {k: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
             for k, v in (("inputs", inputs), ("targets", targets))}
  return tf.train.Example(features=tf.train.Features(
      feature=feature)).SerializeToString(deterministic=True)


@tf.autograph.experimental.do_not_convert
def parse_example(record):
  parsed = tf.io.parse_single_example(record, _PARSE_SPEC)
  return {k: tf.sparse.to_dense(parsed[k]) for k in FEATURES}


def damaged_records(files):
  """(the first of ``files`` whose TFRecords do not read, why), or None.
  Reads every record: for naming a damaged shard after a read failed."""
  for path in sorted(files):
    try:
      tf.data.TFRecordDataset(path).reduce(0, lambda n, _: n + 1)
    except tf.errors.OpError as e:
      text = str(e)
      why = text[text.find("truncated"):].split("'")[0] if "truncated" in \
          text else type(e).__name__
      return path, why.strip()
  return None


def read_records(files, shuffle_files=False, seed=None, input_context=None):
  """Examples from TFRecord shards, optionally split across input pipelines
  (one per worker under a tf.distribute strategy).

  Every example is read at the same rate by every pipeline: the shards are
  split by file only when they divide evenly among the pipelines (datagen
  writes them round-robin, so they hold the same number of examples within
  one); otherwise every pipeline reads all of them in the same (seeded)
  order and keeps every N-th example.
  """
  files = sorted(files)
  if not files:
    raise MissingFileError("no data shards found; run t2t-datagen first")
  pipelines = input_context.num_input_pipelines if input_context else 1
  dataset = tf.data.Dataset.from_tensor_slices(files)
  by_file = pipelines > 1 and len(files) % pipelines == 0
  if by_file:
    dataset = dataset.shard(pipelines, input_context.input_pipeline_id)
  if shuffle_files and (seed is not None or pipelines == 1 or by_file):
    # Split by example, every pipeline must see the files in one order.
    dataset = dataset.shuffle(len(files), seed=seed)
  dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=4,
                               num_parallel_calls=tf.data.AUTOTUNE,
                               deterministic=True)
  if pipelines > 1 and not by_file:
    dataset = dataset.shard(pipelines, input_context.input_pipeline_id)
  return dataset.map(parse_example, num_parallel_calls=tf.data.AUTOTUNE,
                     deterministic=True)


@tf.autograph.experimental.do_not_convert
def example_length(example):
  return tf.maximum(tf.size(example["inputs"]), tf.size(example["targets"]))


def count_longer(examples, max_length):
  """(examples, how many are longer than ``max_length`` tokens) of a finite
  dataset, or None for an endless one (generated on the fly)."""
  if examples.cardinality() == tf.data.INFINITE_CARDINALITY:
    return None

  def add(counts, example):
    longer = tf.cast(example_length(example) > max_length, tf.int64)
    return counts + tf.stack([tf.constant(1, tf.int64), longer])

  total, longer = examples.reduce(tf.zeros([2], tf.int64), add).numpy()
  return int(total), int(longer)


# Evaluation skips examples longer than this many times max_length: the
# memory of one example's attention grows with the square of its length (a
# 1 MB dev line is hundreds of thousands of tokens).
EVAL_LENGTH_FACTOR = 4


def batch_by_tokens(examples, batch_size, max_length, training, seed=None,
                    shuffle_buffer=10000, pad_to_bounds=False):
  """Groups examples into length buckets and batches of about
  ``batch_size`` tokens.

  Args:
    examples: a dataset of {"inputs", "targets"} 1-D int64 tensors.
    batch_size: tokens per batch (per replica), padding included.
    max_length: the longest example kept when ``training``; also the last
      bucket bound. When not training, longer examples form batches of one,
      up to ``EVAL_LENGTH_FACTOR`` x ``max_length`` tokens; longer ones are
      skipped.
    training: shuffle (seeded), drop over-long examples, repeat forever.
    pad_to_bounds: pad every training batch to its bucket's upper bound, so
      that batches come in one shape a bucket (``len(bucket_boundaries)``
      shapes, what XLA compiles once each); else to its longest example.
      Eval batches are padded to the bound above their longest example (past
      the last bound, to a multiple of ``max_length``), so their lengths
      too are few.
  Returns:
    a dataset of {"inputs": [batch, length], "targets": [batch, length]}.
  """
  if training:
    examples = examples.filter(
        lambda ex: example_length(ex) <= max_length)
    examples = examples.shuffle(shuffle_buffer, seed=seed,
                                reshuffle_each_iteration=True).repeat()
  else:
    examples = examples.filter(
        lambda ex: example_length(ex) <= EVAL_LENGTH_FACTOR * max_length)
  bounds = bucket_boundaries(max_length)
  # One bucket per bound, plus one for what is longer (eval only).
  sizes = [max(1, batch_size // b) for b in bounds] + [1]
  dataset = examples.bucket_by_sequence_length(
      example_length, bucket_boundaries=[b + 1 for b in bounds],
      bucket_batch_sizes=sizes,
      padded_shapes={k: [None] for k in FEATURES},
      # Eval keeps longer examples, past the last bound: never padded so.
      pad_to_bucket_boundary=pad_to_bounds and training)
  if pad_to_bounds and not training:
    dataset = dataset.map(lambda batch: _pad_to_bound(batch, bounds,
                                                      max_length))
  options = tf.data.Options()
  options.deterministic = True
  return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


def _pad_to_bound(batch, bounds, max_length):
  """Both features of ``batch`` padded to the smallest of ``bounds`` at
  least as long as either, or past the last to the next multiple of
  ``max_length``."""
  length = tf.maximum(tf.shape(batch["inputs"])[1],
                      tf.shape(batch["targets"])[1])
  above = tf.constant(bounds, tf.int32)
  above = tf.boolean_mask(above, above >= length)
  length = tf.cond(tf.size(above) > 0, lambda: above[0],
                   lambda: -(-length // max_length) * max_length)
  return {k: tf.pad(v, [[0, 0], [0, length - tf.shape(v)[1]]])
          for k, v in batch.items()}


def padding_fraction(batches, limit=None):
  """Pad tokens / all tokens (inputs and targets) over ``batches``."""
  pad = total = 0
  for i, batch in enumerate(batches):
    if limit is not None and i >= limit:
      break
    for k in FEATURES:
      values = batch[k].numpy()
      pad += int((values == 0).sum())
      total += values.size
  return pad / max(total, 1)
