"""Batching for decoding: sources with EOS, cut to a maximum length, in
batches of similar (or equal) lengths, padded, and read a window of lines at
a time."""

import numpy as np
import tensorflow as tf

from t2t_keras.ids import EOS_ID, PAD_ID


def with_eos(ids, max_length):
  """(``ids`` cut to ``max_length - 1`` tokens, then EOS; whether a cut was
  made)."""
  return ids[:max_length - 1] + [EOS_ID], len(ids) > max_length - 1


def encode_with_eos(vocab, text, max_length):
  """``with_eos`` of the ids of ``text``."""
  return with_eos(vocab.encode(text), max_length)


def length_sorted_chunks(lengths, batch_size):
  """Indices of ``lengths`` in order of length, in chunks of
  ``batch_size``: batches of similar lengths waste little on padding."""
  order = sorted(range(len(lengths)), key=lengths.__getitem__)
  return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def pad_rows(rows, count=None, width=None):
  """Lists of ids -> numpy int32 [count, width] (default: [len(rows),
  longest]), 0-padded; rows past ``len(rows)`` repeat the first."""
  count = len(rows) if count is None else count
  width = max(len(r) for r in rows) if width is None else width
  batch = np.full((count, width), PAD_ID, np.int32)
  for index in range(count):
    row = rows[index] if index < len(rows) else rows[0]
    batch[index, :len(row)] = row
  return batch


def padded(rows):
  """Lists of ids -> int32 tensor [len(rows), longest], 0-padded."""
  return tf.constant(pad_rows(rows))


def windows(items, size, ready=None):
  """Lists of up to ``size`` consecutive items of the iterable ``items``;
  with ``ready`` (a function: whether the next item comes without
  waiting, ``lines.LineReader.ready``), a list also ends where the input
  pauses, so what has arrived is answered before more is waited for."""
  items = iter(items)
  while True:
    window = []
    for item in items:
      window.append(item)
      if len(window) == size or (ready is not None and not ready()):
        break
    if not window:
      return
    yield window


def equal_length_chunks(lengths, batch_size):
  """Indices of ``lengths`` in batches of at most ``batch_size``, each of
  one length, shortest first."""
  chunks = []
  for index in sorted(range(len(lengths)), key=lengths.__getitem__):
    if (not chunks or len(chunks[-1]) == batch_size or
        lengths[chunks[-1][0]] != lengths[index]):
      chunks.append([])
    chunks[-1].append(index)
  return chunks
