"""Word alignments from the encoder-decoder attention (for CAT tools and
tag transfer; CTranslate2's ``return_attention``, OpenNMT's alignments).

For each (source, output) pair one forced full pass records the
encoder-decoder attention (``layers.attention_record``); the weights of one
layer, averaged over heads, are summed over the pieces of each source word
and averaged over the pieces of each target word, and each target word is
aligned to its best source word. Words are as split on spaces (a piece
beginning with U+2581 begins a word); EOS is never aligned. The result is
Pharaoh format, ``i-j`` (source word i, target word j, 0-based), sorted.

``layer``: which layer's attention (an index, negative from the top);
``rows``: "predicting" takes, for target piece t, the attention of the
position that predicts it; "reading", of the position that reads it (t+1).
``ALIGNMENT_RULE`` was chosen on translate_synthetic's dev split (README).
"""

import numpy as np

from t2t_keras.decoding.batching import encode_with_eos, padded
from t2t_keras.layers.attention_record import recording
from t2t_keras.errors import UserError

WORD_START = "\u2581"
ALIGNMENT_RULE = {"layer": -1, "rows": "predicting"}


def word_of_pieces(pieces):
  """The word index of each piece (str), a new word at each U+2581."""
  words, index = [], -1
  for piece in pieces:
    if piece.startswith(WORD_START) or index < 0:
      index += 1
    words.append(index)
  return words


def align_words(weights, source_pieces, target_pieces):
  """Pharaoh pairs from attention.

  Args:
    weights: float [target pieces (+EOS), source pieces (+EOS)], each row a
      target piece's attention over the source pieces.
    source_pieces, target_pieces: the pieces without EOS.
  Returns:
    sorted [(source word, target word)].
  """
  src_words = word_of_pieces(source_pieces)
  tgt_words = word_of_pieces(target_pieces)
  if not src_words or not tgt_words:
    return []
  by_source = np.zeros([len(target_pieces), src_words[-1] + 1])
  for s, word in enumerate(src_words):
    by_source[:, word] += weights[:len(target_pieces), s]
  pairs = []
  for word in range(tgt_words[-1] + 1):
    rows = [t for t, w in enumerate(tgt_words) if w == word]
    pairs.append((int(np.argmax(by_source[rows].mean(axis=0))), word))
  return sorted(pairs)


class Aligner:
  """Alignments of (source, output) text pairs under ``model`` (a
  ``Seq2SeqModel`` with ``attention_layers``).

  Args:
    model, vocab, target_vocab: as for ``decoder.Decoder``.
    layer, rows: see the module docstring.
    max_length: sources and outputs are cut to this many pieces.
    batch_size: pairs per forced pass.
  """

  def __init__(self, model, vocab, target_vocab=None,
               layer=ALIGNMENT_RULE["layer"], rows=ALIGNMENT_RULE["rows"],
               max_length=512, batch_size=32):
    if rows not in ("predicting", "reading"):
      raise UserError(f"alignment rows must be 'predicting' or 'reading', "
                      f"got {rows!r}")
    self.model, self.vocab = model, vocab
    self.target_vocab = target_vocab or vocab
    self.layer = model.attention_layers()["encoder_decoder"][layer]
    self.rows, self.max_length = rows, max_length
    self.batch_size = batch_size

  def align(self, sources, outputs):
    """[source str], [output str] -> [sorted (i, j) pairs] per pair."""
    results = []
    for first in range(0, len(sources), self.batch_size):
      results.extend(self._batch(sources[first:first + self.batch_size],
                                 outputs[first:first + self.batch_size]))
    return results

  def _batch(self, sources, outputs):
    source_ids = [encode_with_eos(self.vocab, s, self.max_length)[0]
                  for s in sources]
    target_ids = [encode_with_eos(self.target_vocab, o, self.max_length)[0]
                  for o in outputs]
    with recording() as recorded:
      self.model({"inputs": padded(source_ids),
                  "targets": padded(target_ids)}, training=False)
    weights = np.asarray(recorded[self.layer]).mean(axis=1)   # [b, T, S]
    shift = 1 if self.rows == "reading" else 0
    pairs = []
    for row, (src, tgt) in enumerate(zip(source_ids, target_ids)):
      grid = weights[row, shift:, :len(src)]   # EOS's position reads the last
      pairs.append(align_words(grid, self.vocab.pieces(src[:-1]),
                               self.target_vocab.pieces(tgt[:-1])))
    return pairs


def alignment_error_rate(predicted, gold):
  """AER (Och and Ney 2003) with every gold link sure: 1 - 2|A & G| /
  (|A| + |G|), over lists of pair sets, in percent."""
  hits = sum(len(set(a) & set(g)) for a, g in zip(predicted, gold))
  total = sum(len(a) + len(g) for a, g in zip(predicted, gold))
  return 100.0 * (1.0 - 2.0 * hits / total) if total else 0.0
