"""Decoding through an exported SavedModel instead of a checkpoint."""

import time

import tensorflow as tf

from t2t_keras.decoding.decoder import BATCH_SIZE, DecodeStats
from t2t_keras.logs import native_stderr_silenced


class SavedModelDecoder:
  """Calls an export's ``serving_default`` on length-sorted batches and puts
  the outputs back in order (same interface as ``Decoder.decode``)."""

  def __init__(self, path, batch_size=BATCH_SIZE):
    import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import
    with native_stderr_silenced():   # SentencePiece's note at load
      self.signature = tf.saved_model.load(path).signatures[
          "serving_default"]
    self.batch_size = batch_size
    self.stats = DecodeStats()

  def decode(self, lines, progress=None):
    start = time.time()
    order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
    results = [None] * len(lines)
    for first in range(0, len(order), self.batch_size):
      chunk = order[first:first + self.batch_size]
      out = self.signature(inputs=tf.constant([lines[i] for i in chunk]))
      for index, text in zip(chunk, out["outputs"].numpy()):
        results[index] = text.decode("utf-8", errors="replace")
      self.stats.sentences += len(chunk)
      if progress:
        progress(self.stats.sentences)
    self.stats.seconds += time.time() - start
    return results
