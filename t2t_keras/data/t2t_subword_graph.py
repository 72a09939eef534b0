"""tensor2tensor's SubwordTextEncoder as TensorFlow ops that stock TF
Serving has (strings in, strings out): the rules of ``data.t2t_subword``,
each as a few vectorized ops over a batch of lines.

Greedy longest match is tensorflow-text's WordPiece with no suffix mark:
WordPiece takes, from a word's start, the longest piece in its vocabulary,
and again from where that ends, which is rule 3.
"""

import tensorflow as tf

from t2t_keras.data.t2t_subword import (UNDEFINED, alphanumeric_ranges)
from t2t_keras.ids import EOS_ID, PAD_ID

# A token longer than this many bytes would become one unknown piece.
_MOST_TOKEN_BYTES = 1 << 30
_ESCAPED = r"\\u|\\\\|\\[0-9]+;"
_MOST_CODE_DIGITS = 7        # 1114111, the last code point, has 7


def _sorted_lookup(sorted_values, values):
  """Whether each of ``values`` (int32 [n]) is in ``sorted_values``
  (int32 [m], m >= 1)."""
  index = tf.searchsorted(sorted_values, values, side="left")
  index = tf.minimum(index, tf.size(sorted_values) - 1)
  return tf.equal(tf.gather(sorted_values, index), values)


class SubwordGraph(tf.Module):
  """``tokenize``: tf.string [batch] -> int32 RaggedTensor [batch, None]
  (no EOS). ``detokenize``: int [batch, length] (0-padded, EOS-terminated)
  or ragged -> tf.string [batch].

  Args:
    vocab: a ``data.t2t_subword.T2TSubwordVocab``.
  """

  def __init__(self, vocab):
    super().__init__(name="t2t_subword")
    import tensorflow_text
    ids = {s: i for i, s in enumerate(vocab.subtokens) if s}
    self.table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(list(ids), tf.string),
            tf.constant(list(ids.values()), tf.int64)), default_value=-1)
    self.wordpiece = tensorflow_text.WordpieceTokenizer(
        self.table, suffix_indicator="", max_bytes_per_word=_MOST_TOKEN_BYTES,
        max_chars_per_token=vocab.max_subtoken_length,
        token_out_type=tf.int64, unknown_token=None)
    self.subtokens = tf.constant(vocab.subtokens, tf.string)
    bounds = [b for pair in alphanumeric_ranges() for b in pair]
    self.alnum_bounds = tf.constant(bounds, tf.int32)
    self.alphabet = tf.constant(sorted(ord(c) for c in vocab.alphabet),
                                tf.int32)

  def _alphanumeric(self, codes):
    """int32 [n] -> bool [n]: inside one of the [start, end) ranges."""
    after = tf.searchsorted(self.alnum_bounds, codes, side="right")
    return tf.equal(after % 2, 1)

  def tokenize(self, strings):
    strings = tf.convert_to_tensor(strings, tf.string)
    codes = tf.strings.unicode_decode(strings, "UTF-8", errors="replace")
    flat, rows = codes.flat_values, codes.value_rowids()
    n = tf.size(flat)
    position = tf.range(n, dtype=rows.dtype) - tf.gather(codes.row_starts(),
                                                         rows)
    alnum = self._alphanumeric(flat)
    # Rule 1: a token starts a line or a run of the other kind.
    changed = tf.not_equal(alnum, tf.concat([[False], alnum[:-1]], 0))
    starts = tf.logical_or(tf.equal(position, 0), changed)
    token = tf.cumsum(tf.cast(starts, tf.int32)) - 1             # [n]
    tokens = tf.reduce_sum(tf.cast(starts, tf.int32))
    # Rule 2, a character at a time.
    chars = tf.strings.unicode_encode(flat[:, None], "UTF-8")
    kept = tf.logical_and(_sorted_lookup(self.alphabet, flat),
                          tf.not_equal(flat, ord("\n")))
    spelled = tf.strings.join(["\\", tf.strings.as_string(flat), ";"])
    escaped = tf.where(kept, chars, spelled)
    escaped = tf.where(tf.equal(flat, ord("_")), "\\u", escaped)
    escaped = tf.where(tf.equal(flat, ord("\\")), "\\\\", escaped)
    words = tf.strings.unsorted_segment_join(escaped, token, tokens) + "_"
    # A one-space token between two others (not at a line's start or
    # end) is dropped.
    length = tf.math.unsorted_segment_sum(tf.ones_like(token), token, tokens)
    first = tf.boolean_mask(flat, starts)
    token_rows = tf.boolean_mask(rows, starts)
    last = tf.not_equal(token_rows, tf.concat([token_rows[1:], [-1]], 0))
    lone_space = tf.logical_and(
        tf.logical_and(tf.equal(length, 1), tf.equal(first, ord(" "))),
        tf.logical_and(tf.not_equal(tf.boolean_mask(position, starts), 0),
                       tf.logical_not(last)))
    keep = tf.logical_not(lone_space)
    words = tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(words, keep), tf.boolean_mask(token_rows, keep),
        nrows=tf.shape(strings, out_type=rows.dtype)[0])
    # Rule 3.
    pieces = self.wordpiece.tokenize(words)             # [batch, words, ?]
    return tf.cast(pieces.merge_dims(1, 2), tf.int32)

  def detokenize(self, ids):
    if not isinstance(ids, tf.RaggedTensor):
      ids = tf.convert_to_tensor(ids)
      is_eos = tf.cast(tf.equal(ids, EOS_ID), tf.int32)
      before_eos = tf.equal(tf.cumsum(is_eos, axis=1), 0)
      ids = tf.ragged.boolean_mask(
          ids, tf.logical_and(before_eos, tf.not_equal(ids, PAD_ID)))
    ids = tf.cast(ids, tf.int32)
    size = tf.size(self.subtokens)
    known = tf.logical_and(ids >= 0, ids < size)
    strings = tf.ragged.map_flat_values(
        lambda i, k: tf.where(k, tf.gather(self.subtokens,
                                           tf.clip_by_value(i, 0, size - 1)),
                              ""), ids, known)
    joined = tf.strings.reduce_join(strings, axis=1)             # [batch]
    words = tf.strings.split(joined, "_")                        # ragged
    words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
    text = tf.ragged.map_flat_values(self._unescape, words)
    first = tf.strings.unicode_decode(
        tf.strings.substr(text.flat_values, 0, 1, unit="UTF8_CHAR"),
        "UTF-8", errors="replace")
    alnum = self._alphanumeric(tf.reshape(first.to_tensor(0), [-1]))
    position = tf.range(tf.size(alnum), dtype=text.row_splits.dtype) - \
        tf.gather(text.row_starts(), text.value_rowids())
    after_alnum = tf.logical_and(
        tf.concat([[False], alnum[:-1]], 0), tf.not_equal(position, 0))
    spaced = tf.where(tf.logical_and(alnum, after_alnum),
                      " " + text.flat_values, text.flat_values)
    return tf.strings.reduce_join(text.with_flat_values(spaced), axis=1)

  def _unescape(self, words):
    """tf.string [n] escaped tokens (no "_") -> [n] tokens."""
    import tensorflow_text
    parts = tensorflow_text.regex_split(words, _ESCAPED, _ESCAPED)
    p = parts.flat_values
    code = tf.strings.regex_full_match(p, r"\\[0-9]+;")
    length = tf.strings.length(p)
    raw = tf.where(code, tf.strings.substr(p, tf.ones_like(length),
                                           tf.maximum(length - 2, 0)), "0")
    digits = tf.strings.regex_replace(raw, "^0+([0-9])", r"\1")
    fits = tf.strings.length(digits) <= _MOST_CODE_DIGITS
    number = tf.strings.to_number(tf.where(fits, digits, "0"), tf.int32)
    number = tf.where(tf.logical_and(fits, number <= 0x10FFFF), number,
                      ord(UNDEFINED))
    char = tf.strings.unicode_encode(number[:, None], "UTF-8",
                                     errors="replace")
    out = tf.where(code, char, p)
    out = tf.where(tf.equal(p, "\\u"), "_", out)
    out = tf.where(tf.equal(p, "\\\\"), "\\", out)
    return tf.strings.reduce_join(parts.with_flat_values(out), axis=1)
