"""Decoding through an exported SavedModel instead of a checkpoint: its
``serving_default`` signature (with prefixes, its ``prefixed`` one) on
length-sorted batches of lines, under the ``backend.Backend`` protocol."""

import os

import tensorflow as tf

from t2t_keras.decoding.backends.backend import Backend
from t2t_keras.decoding.batching import length_sorted_chunks
from t2t_keras.decoding.options import BATCH_SIZE
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.io.logs import native_stderr_filtered, native_stderr_silenced


def check_saved_model(path):
  """A one-line ``UserError`` unless ``path`` is a SavedModel directory: a
  missing one, an export root (which names its newest version) and one
  without saved_model.pb or variables/ (an export stopped halfway)."""
  if not os.path.isdir(path):
    raise MissingFileError(f"--saved_model_dir={path} does not exist")
  versions = sorted((int(n) for n in os.listdir(path) if n.isdigit() and
                     os.path.isdir(os.path.join(path, n))))
  if not os.path.exists(os.path.join(path, "saved_model.pb")):
    if versions:
      newest = os.path.join(path, str(versions[-1]))
      raise UserError(f"--saved_model_dir={path} is an export root: give a "
                      f"version directory, e.g. {newest}")
    raise UserError(f"--saved_model_dir={path} holds no saved_model.pb: "
                    "not a SavedModel, or an export that did not finish")
  if not os.path.isdir(os.path.join(path, "variables")):
    raise UserError(f"--saved_model_dir={path} has no variables/ folder: "
                    "an incomplete SavedModel; export it again")
  index = os.path.join(path, "variables", "variables.index")
  if not os.path.isfile(index):
    raise UserError(f"--saved_model_dir={path} has no {index}: its "
                    "variables are missing; export it again")


class SavedModelDecoder(Backend):
  """Decodes lines with the export in ``path`` (its decode hparams are
  fixed at export).

  ``postprocess`` and ``repaired``: as for ``decoder.Decoder`` (a
  problem's; the export holds the search, not the post-processing)."""
  prefix_kind = "text"

  def __init__(self, path, batch_size=BATCH_SIZE, postprocess=None,
               repaired=None, whole_words=True):
    super().__init__()
    # Imported for its side effect: it registers the tokenizer ops the
    # SavedModel's graph holds.
    import tensorflow_text  # noqa: F401
    check_saved_model(path)
    with native_stderr_silenced():   # SentencePiece's note at load
      try:
        self.signatures = tf.saved_model.load(path).signatures
      except (tf.errors.OpError, IndexError, ValueError, OSError) as e:
        said = " ".join(str(e).split())[:200]
        raise UserError(f"--saved_model_dir={path} does not load "
                        f"({type(e).__name__}: {said}); its files are "
                        "incomplete or damaged: export it again") from None
    self.path, self.batch_size = path, batch_size
    self.postprocess, self.repaired = postprocess, repaired
    self.prefixed = "prefixed" if whole_words else "prefixed_partial"
    self.ran = False

  def prepare(self, line):
    return line, False

  def batches(self, items):
    return length_sorted_chunks([len(i) for i in items], self.batch_size)

  def decode_batch(self, items, prefixes):
    if not self.ran:   # the graph's first run logs oneDNN's rewrite notes
      self.ran = True
      with native_stderr_filtered():
        return self.decode_batch(items, prefixes)
    inputs = tf.constant(items)
    if prefixes is None:
      out = self.signatures["serving_default"](inputs=inputs)
    else:
      if self.prefixed not in self.signatures:
        raise UserError(f"the SavedModel {self.path} has no "
                        f"'{self.prefixed}' signature (an export of a "
                        "constrained problem, or made before it existed)")
      out = self.signatures[self.prefixed](inputs=inputs,
                                           prefixes=tf.constant(prefixes))
    return [(text.decode("utf-8", errors="replace"), 0)
            for text in out["outputs"].numpy()]
