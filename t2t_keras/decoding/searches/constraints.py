"""Decoding constraints: which tokens each hypothesis may emit next.

A constraint keeps per-hypothesis state in tensors (a dict of tensors whose
first axis is the hypothesis, so beam search reorders it with the same
indices as the model's cache) and, at each step, answers a boolean mask
[hypotheses, vocab] of the allowed tokens. Searches (beam, greedy,
sampling), scoring and the exported SavedModel apply it the same way, in
``keras.ops`` (core ops on TensorFlow, and the same under JAX):

* ``renormalize = True`` (a grammar, e.g. parsing's well-formed trees):
  disallowed tokens get NEG_INF before normalization, so the model's
  distribution is renormalized over the allowed tokens and a forced token
  costs nothing.
* ``renormalize = False`` (a forced prefix): disallowed tokens get NEG_INF
  after normalization, so a forced token costs what the model gives it, as
  forced decoding (``decoding.jobs.scoring``) would score it.

Interface (``Constraint``):
  start(inputs [batch, length], hypotheses) -> state, rows batch*hypotheses
  allowed(state, step, limits [n], vocab) -> bool [n, vocab]
  advance(state, tokens [n]) -> state
  min_limits(state) -> int32 [n]: outputs need at least this many tokens
    (EOS included); the search raises its length limits to them.
"""

import numpy as np
from keras import ops

from t2t_keras.decoding.searches.tensor_ops import take
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers.masks import NEG_INF


class Constraint:
  """Base class: allows everything (see the module docstring)."""

  renormalize = True

  def start(self, inputs, hypotheses):
    del inputs, hypotheses
    return {}

  def allowed(self, state, step, limits, vocab):
    del state, step, vocab
    return ops.ones((ops.shape(limits)[0], 1), "bool")

  def advance(self, state, tokens):
    del tokens
    return state

  def min_limits(self, state):
    del state
    return None

  def length_bound(self, inputs):
    """A scalar int at least every ``min_limits``, computed from shapes
    only (XLA takes it as a constant), or None where ``min_limits`` is."""
    del inputs
    return None


def per_hypothesis(tensor, hypotheses):
  """Each row of ``tensor`` repeated ``hypotheses`` times (beam order)."""
  return ops.repeat(tensor, hypotheses, axis=0)


def one_hot_mask(ids, vocab):
  """int [n] -> bool [n, vocab], True at each row's id."""
  return ops.equal(ops.arange(vocab)[None, :], ops.cast(ids, "int32")[:, None])


def bias(mask):
  """bool mask -> float32 0 where allowed, NEG_INF elsewhere."""
  return ops.where(mask, 0.0, NEG_INF)


def constrained_log_probs(logits, mask, renormalize):
  """log-softmax of float32 ``logits`` [n, vocab] under a bool ``mask``
  (None: no constraint), as the module docstring says."""
  if mask is None:
    return ops.log_softmax(logits, axis=-1)
  if renormalize:
    return ops.log_softmax(logits + bias(mask), axis=-1)
  return ops.log_softmax(logits, axis=-1) + bias(mask)


def word_starts_of(vocab):
  """``vocab.word_starts()``, or None for a vocabulary without words (ids
  standing for themselves): its prefixes' last token may go on."""
  starts = getattr(vocab, "word_starts", None)
  return starts() if starts else None


class PrefixConstraint(Constraint):
  """Each output begins with its prefix (CTranslate2's ``target_prefix``),
  then the search goes on: with ``word_starts``, with a new word or the
  end (a prefix is whole words: "kemi jeba" goes on as "kemi jeba ...",
  never "kemi jebaen"); without, freely (the last word may go on, for
  interactive completion).

  Args:
    prefixes: int32 [batch, prefix_length], 0-padded target ids (no EOS);
      a row of padding only leaves its sentence free.
    word_starts: bool [target vocab], the pieces that begin a word
      (``SubwordVocab.word_starts``), or None.
  """

  renormalize = False

  def __init__(self, prefixes, word_starts=None):
    prefixes = ops.cast(prefixes, "int32")
    # One padding column, so that a step past every prefix reads padding.
    self.prefixes = ops.pad(prefixes, ((0, 0), (0, 1)))
    self.word_starts = None
    if word_starts is not None:
      # EOS may follow a prefix: the output is the prefix alone.
      starts = np.array(word_starts, bool)
      starts[EOS_ID] = True
      self.word_starts = starts

  def start(self, inputs, hypotheses):
    del inputs
    lengths = ops.sum(
        ops.cast(ops.not_equal(self.prefixes, PAD_ID), "int32"), 1)
    return {"prefix": per_hypothesis(self.prefixes, hypotheses),
            "length": per_hypothesis(lengths, hypotheses)}

  def allowed(self, state, step, limits, vocab):
    del limits
    prefix = state["prefix"]
    at = ops.minimum(step, ops.shape(prefix)[1] - 1)
    forced = take(prefix, at, axis=1)
    free = ops.greater_equal(step, state["length"])
    allowed = ops.logical_or(free[:, None], one_hot_mask(forced, vocab))
    if self.word_starts is None:
      return allowed
    # The step right after a prefix: a word's first piece or EOS.
    starts = ops.convert_to_tensor(self.word_starts)[:vocab]
    starts = ops.pad(starts, ((0, vocab - ops.shape(starts)[0]),))
    after = ops.logical_and(ops.equal(step, state["length"]),
                            ops.greater(state["length"], 0))
    return ops.where(after[:, None], starts[None, :], allowed)

  def min_limits(self, state):
    return state["length"] + 1

  def length_bound(self, inputs):
    del inputs
    return ops.shape(self.prefixes)[1]   # the longest prefix + 1
