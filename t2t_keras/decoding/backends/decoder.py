"""Decoding through a checkpoint: the model in memory, searched by the
registered search the decode hparams pick (``decoding.searches.search``), under the
problem's constraint or a caller's target prefixes. One traced tf.function
serves every batch shape. The lines, batches and strings are
``ids_backend.IdsBackend``'s, shared with ``jax_decoder.JaxDecoder``.
"""

import tensorflow as tf

from t2t_keras.decoding.batching import padded
from t2t_keras.decoding.searches.constraints import (PrefixConstraint,
                                                     word_starts_of)
from t2t_keras.decoding.backends.ids_backend import IdsBackend
from t2t_keras.decoding.searches.search import search_function
from t2t_keras.models.prepared import prepare_for_decoding


class Decoder(IdsBackend):
  """Decodes strings with ``model`` under ``hparams``.

  Args:
    model: a ``models.base.Seq2SeqModel``.
    vocab: encodes the source lines (and decodes the outputs unless
      ``target_vocab`` is given).
    hparams: from ``options.decode_hparams``.
    postprocess: ``(text, source) -> line`` (a problem's ``postprocess``).
    target_vocab: decodes the outputs when the two sides differ.
    constraint: a ``decoding.searches.constraints.Constraint`` every search applies
      (a problem's ``decode_constraint``), or None.
    repaired: ``(text, source) -> bool``, whether ``postprocess`` repaired
      an output (counted in ``stats.repaired``).
    whole_words: a target prefix is whole words (the output goes on with a
      new word after it); False: its last word may go on.
    xla: compile the search with XLA (``tf.function(jit_compile=True)``):
      one compiled program a batch shape, the same outputs.
    fixed_weights: the model's weights no longer change (t2t-decoder), so
      the model is prepared with copies made now of W^T and the steps'
      stacked kernels (``models.prepared``, as a SavedModel is), not a
      transpose a batch; never for validation while training. Needed by
      ``hparams.weights`` int8 or bfloat16 (rounded once).
  """

  def __init__(self, model, vocab, hparams, postprocess=None,
               target_vocab=None, constraint=None, repaired=None,
               whole_words=True, xla=False, fixed_weights=False):
    super().__init__(model, vocab, hparams, postprocess, target_vocab,
                     constraint, repaired)
    self.prepared = prepare_for_decoding(model, fixed_weights,
                                         weights=hparams.weights)
    search = search_function(self.prepared, hparams)

    ids = tf.TensorSpec([None, None], tf.int32)
    compiled = dict(input_signature=[ids], autograph=False, jit_compile=xla)
    self._search = tf.function(lambda inputs: search(inputs, constraint),
                               **compiled)
    self._search_prefixed = tf.function(
        lambda inputs, prefixes: search(inputs, PrefixConstraint(
            prefixes, word_starts_of(self.target_vocab) if whole_words
            else None)),
        **dict(compiled, input_signature=[ids, ids]))

  def trace(self):
    """Traces the search now, under the caller's device and strategy scope
    (a later call under the same scope runs it without tracing)."""
    self._search.get_concrete_function()

  def search(self, batch, prefixes=None):
    """int32 [batch, length] source ids (and int32 [batch, prefix_length]
    0-padded target prefixes) -> numpy (ids [batch, beams, length], scores
    [batch, beams])."""
    if prefixes is None:
      ids, scores = self._search(batch)
    else:
      ids, scores = self._search_prefixed(batch, prefixes)
    return ids.numpy(), scores.numpy()

  def search_rows(self, items, prefixes):
    return self.search(padded(items),
                       None if prefixes is None else padded(prefixes))
