"""Decoding a checkpoint under Keras's JAX backend (``KERAS_BACKEND=jax
t2t-decoder``): the registered search the decode hparams pick, compiled
with ``jax.jit`` (``jax_search.JaxSearch``: the same search code and ids as
the TensorFlow decoder's), with its lines, batches and strings as
``ids_backend.IdsBackend`` makes them.

``jax.jit`` compiles one program a batch shape, so a batch is padded to a
few shapes: its rows to a power of two (at most ``batch_size``; a padding
row repeats the first and is dropped), its width (and its prefixes') up to
the next of 8, 12, 16, 24, 32, 48, 64, ... (at most ``max_input_length``).
Each sentence's output limit comes from its own length, so padding changes
no output.
"""

import numpy as np

from t2t_keras.decoding.batching import pad_rows
from t2t_keras.decoding.searches.constraints import word_starts_of
from t2t_keras.decoding.backends.ids_backend import IdsBackend
from t2t_keras.decoding.backends.jax_search import JaxSearch


def padded_width(longest, limit):
  """The width a batch whose longest row has ``longest`` ids is padded to:
  the next of 8, 12, 16, 24, 32, 48, 64, ... (two a doubling), at
  most ``limit`` (never below ``longest``)."""
  width = 8
  while width < longest:
    width = width * 3 // 2 if width & (width - 1) == 0 else width * 4 // 3
  return max(longest, min(width, limit))


def padded_rows(count, most):
  """Rows a batch of ``count`` sentences is padded to: the next power of
  two, at most ``most`` (never below ``count``)."""
  rows = 1
  while rows < count:
    rows *= 2
  return max(count, min(rows, most))


class JaxDecoder(IdsBackend):
  """Decodes strings with ``model`` (built under ``KERAS_BACKEND=jax``,
  its weights read) under ``hparams``; the arguments are
  ``decoder.Decoder``'s, without ``xla`` (every search is compiled) and
  ``fixed_weights`` (``JaxSearch`` reads the kernels in its own layout).
  """

  def __init__(self, model, vocab, hparams, postprocess=None,
               target_vocab=None, constraint=None, repaired=None,
               whole_words=True):
    super().__init__(model, vocab, hparams, postprocess, target_vocab,
                     constraint, repaired)
    self._search = JaxSearch(
        model, hparams, constraint,
        word_starts_of(self.target_vocab) if whole_words else None)

  def search_rows(self, items, prefixes):
    count = padded_rows(len(items), self.batch_size)
    limit = int(self.hparams.max_input_length)
    inputs = pad_rows(items, count, padded_width(
        max(len(i) for i in items), limit))
    if prefixes is not None:
      prefixes = pad_rows(prefixes, count, padded_width(
          max(max(len(p) for p in prefixes), 1), limit))
    ids, scores = self._search(inputs, prefixes)
    return np.asarray(ids)[:len(items)], np.asarray(scores)[:len(items)]
