"""Scoring given translations by forced decoding (fairseq's
``--score-reference``, OpenNMT-tf's ``score``, marian-scorer).

For each (source, target) pair the model reads the source and the target
(EOS-terminated) in one full pass; the score is the sum over target tokens
of log P(token | source, previous tokens), the same numbers incremental
decoding would give. One output line per pair:
``log-prob<TAB>log-prob per token<TAB>tokens`` (EOS counted).
"""

import itertools
import time

import tensorflow as tf

from t2t_keras.decode_defaults import DEFAULT_WINDOW
from t2t_keras.decoding.searches.steps import EXTRA_LENGTH
from t2t_keras.decoding.searches.constraints import (NEG_INF,
                                                     constrained_log_probs)
from t2t_keras.decoding.batching import (encode_with_eos,
                                         length_sorted_chunks, padded,
                                         windows)
from t2t_keras.decoding.options import BATCH_SIZE
from t2t_keras.errors import UserError, check_signals
from t2t_keras.ids import PAD_ID
from t2t_keras.io.logs import log_line

_IDS = tf.TensorSpec([None, None], tf.int32)


def step_masks(constraint, inputs, targets, vocab, limits):
  """The masks a constraint gives along given outputs (for scoring).

  Args:
    constraint: a ``Constraint``.
    inputs: int32 [batch, source_length].
    targets: int32 [batch, target_length], EOS-terminated, 0-padded.
    vocab: the target vocabulary size.
    limits: int32 [batch], the searches' length limits (input length +
      extra_length), raised to the constraint's ``min_limits`` here.
  Returns:
    bool [batch, target_length, vocab]: step t's mask before target t.
  """
  state = constraint.start(inputs, 1)
  needed = constraint.min_limits(state)
  if needed is not None:
    limits = tf.maximum(limits, needed)
  steps = tf.shape(targets)[1]
  masks = tf.TensorArray(tf.bool, size=steps)

  def body(step, state, masks):
    masks = masks.write(step, constraint.allowed(state, step, limits, vocab))
    token = targets[:, step]
    advanced = constraint.advance(state, token)
    # Rows past their EOS keep their state (their masks are not scored).
    live = tf.not_equal(token, PAD_ID)
    state = tf.nest.map_structure(
        lambda new, old: tf.where(
            tf.reshape(live, [-1] + [1] * (new.shape.rank - 1)), new, old),
        advanced, state)
    return step + 1, state, masks

  _, _, masks = tf.while_loop(lambda step, *_: step < steps, body,
                              (tf.constant(0), state, masks))
  return tf.transpose(masks.stack(), [1, 0, 2])


class Scorer:
  """Scores (source, target) string pairs with ``model``.

  Args:
    model: a ``models.base.Seq2SeqModel``.
    vocab: encodes the sources; ``target_vocab`` the targets (default:
      ``vocab``).
    max_input_length: sources (and targets) are cut to this many tokens,
      EOS included; cuts are counted in ``truncated``.
    batch_size: pairs per model call.
    constraint: a ``decoding.searches.constraints.Constraint`` (a problem's
      ``decode_constraint``): each token is scored as the searches score
      it under the constraint (a target it forbids scores about NEG_INF),
      with the searches' length limits (input length + ``extra_length``).
  """

  def __init__(self, model, vocab, target_vocab=None, max_input_length=512,
               batch_size=BATCH_SIZE, constraint=None,
               extra_length=EXTRA_LENGTH):
    self.model, self.vocab = model, vocab
    self.constraint = constraint
    self.extra_length = extra_length
    self.target_vocab = target_vocab or vocab
    self.max_input_length, self.batch_size = max_input_length, batch_size
    self.truncated = 0
    self._score = tf.function(self._batch, input_signature=[_IDS, _IDS],
                              autograph=False)

  def _batch(self, inputs, targets):
    """-> (log-prob sums [batch], token counts [batch])."""
    logits = self.model({"inputs": inputs, "targets": targets},
                        training=False)
    # Padding is never produced, as in the searches (``beam_search``).
    logits = tf.cast(logits, tf.float32) + tf.one_hot(
        PAD_ID, tf.shape(logits)[2], on_value=NEG_INF, off_value=0.0)
    limits = tf.reduce_sum(tf.cast(tf.not_equal(inputs, PAD_ID), tf.int32),
                           1) + self.extra_length
    masks = None if self.constraint is None else step_masks(
        self.constraint, inputs, targets, tf.shape(logits)[2], limits)
    log_probs = constrained_log_probs(
        logits, masks, self.constraint is None or self.constraint.renormalize)
    chosen = tf.gather(log_probs, targets, axis=2, batch_dims=2)
    real = tf.cast(tf.not_equal(targets, PAD_ID), tf.float32)
    return tf.reduce_sum(chosen * real, 1), tf.reduce_sum(real, 1)

  def _ids(self, vocab, text):
    ids, cut = encode_with_eos(vocab, text, self.max_input_length)
    self.truncated += cut
    return ids

  def score(self, pairs):
    """[(source, target)] -> [(log-prob, tokens)], in order."""
    encoded = [(self._ids(self.vocab, s), self._ids(self.target_vocab, t))
               for s, t in pairs]
    results = [None] * len(encoded)
    for chunk in length_sorted_chunks([len(e[0]) for e in encoded],
                                      self.batch_size):
      check_signals()   # a stop whose exception a GC callback dropped
      sums, counts = self._score(padded([encoded[i][0] for i in chunk]),
                                 padded([encoded[i][1] for i in chunk]))
      for row, index in enumerate(chunk):
        results[index] = (float(sums[row]), int(counts[row]))
    return results


def format_score(log_prob, tokens):
  return f"{log_prob:.4f}\t{log_prob / tokens:.4f}\t{tokens}"


def tsv_pairs(reader):
  """(source, target) from ``source<TAB>target`` lines of a LineReader."""
  for line in reader:
    source, tab, target = line.partition("\t")
    if not tab:
      raise UserError(f"{reader.name} line {reader.lines}: no tab; expected "
                      "source<TAB>target")
    yield source, target


def paired_lines(sources, targets):
  """(source, target) from two LineReaders that must have equal lengths."""
  for source, target in itertools.zip_longest(sources, targets):
    if source is None or target is None:
      shorter = sources if source is None else targets
      raise UserError(f"{shorter.name} ends after {shorter.lines} line(s) "
                      "but the other file goes on: sources and targets must "
                      "have one line per pair")
    yield source, target


def score_stream(scorer, pairs, target, window=DEFAULT_WINDOW,
                 log=log_line):
  """Scores an iterable of pairs into the binary stream ``target``,
  ``window`` pairs at a time (each window written and flushed at once).
  Returns the number of lines written."""
  start, written = time.time(), 0
  for chunk in windows(pairs, window):
    target.write("".join(format_score(*s) + "\n"
                         for s in scorer.score(chunk)).encode("utf-8"))
    target.flush()
    written += len(chunk)
  log(f"scored {written:,} pair(s) in {time.time() - start:.1f} s")
  if scorer.truncated:
    log(f"{scorer.truncated} source or target line(s) longer than "
        f"{scorer.max_input_length} tokens were cut to that length")
  return written
