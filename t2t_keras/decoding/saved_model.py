"""Decoding through an exported SavedModel instead of a checkpoint."""

import time

import tensorflow as tf

from t2t_keras.decoding.decoder import BATCH_SIZE, DecodeStats
from t2t_keras.errors import UserError
from t2t_keras.logs import native_stderr_silenced


class SavedModelDecoder:
  """Calls an export's ``serving_default`` (with prefixes, its
  ``prefixed`` signature) on length-sorted batches and puts the outputs
  back in order (same interface as ``Decoder.decode``).

  ``postprocess`` and ``repaired``: as for ``decoder.Decoder`` (a
  problem's; the export holds the search, not the post-processing)."""

  def __init__(self, path, batch_size=BATCH_SIZE, postprocess=None,
               repaired=None):
    import tensorflow_text  # pylint: disable=g-import-not-at-top,unused-import
    with native_stderr_silenced():   # SentencePiece's note at load
      self.signatures = tf.saved_model.load(path).signatures
    self.path, self.batch_size = path, batch_size
    self.postprocess, self.repaired = postprocess, repaired
    self.stats = DecodeStats()

  def decode(self, lines, progress=None, prefixes=None):
    start = time.time()
    if prefixes is not None and "prefixed" not in self.signatures:
      raise UserError(f"the SavedModel {self.path} has no 'prefixed' "
                      "signature (an export of a constrained problem, or "
                      "made before prefixes existed)")
    order = sorted(range(len(lines)), key=lambda i: len(lines[i]))
    results = [None] * len(lines)
    for first in range(0, len(order), self.batch_size):
      chunk = order[first:first + self.batch_size]
      inputs = tf.constant([lines[i] for i in chunk])
      if prefixes is None:
        out = self.signatures["serving_default"](inputs=inputs)
      else:
        out = self.signatures["prefixed"](
            inputs=inputs, prefixes=tf.constant([prefixes[i] for i in chunk]))
      for index, text in zip(chunk, out["outputs"].numpy()):
        text = text.decode("utf-8", errors="replace")
        if self.repaired and self.repaired(text, lines[index]):
          self.stats.repaired += 1
        results[index] = (self.postprocess(text, lines[index])
                          if self.postprocess else text)
      self.stats.sentences += len(chunk)
      if progress:
        progress(self.stats.sentences)
    self.stats.seconds += time.time() - start
    return results
