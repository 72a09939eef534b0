"""The pieces every search shares: per-sentence length limits, the
while-loop over the model's cache, and the next token's log-probabilities
with padding never produced, EOS forced at each sentence's limit and an
optional constraint's mask applied (``decoding.searches.constraints``).

Written in ``keras.ops`` and ``tensor_ops`` (core ops on TensorFlow, so a
SavedModel of a search loads in stock TF Serving; the same code under
``jax.jit``). Shapes come from ``ops.shape``: static where known (always
under JAX), tensors in a TensorFlow graph of unknown batch or length.
"""

import keras
import numpy as np
from keras import ops

from t2t_keras.decoding.searches import top_k
from t2t_keras.decoding.searches.constraints import bias, per_hypothesis
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers.masks import NEG_INF

# Section 6.1's settings, the defaults everywhere (decode_hparams too).
BEAM_SIZE, ALPHA, EXTRA_LENGTH = 4, 0.6, 50


def _gnmt_penalty(length, alpha):
  """lp(Y) = ((5 + |Y|) / 6)^alpha in plain arithmetic: a float tensor or a
  Python number."""
  return ((5.0 + length) / 6.0) ** alpha


def length_penalty(length, alpha):
  """GNMT's lp(Y) = ((5 + |Y|) / 6)^alpha of an int tensor or a number."""
  return _gnmt_penalty(ops.cast(length, "float32"), alpha)


def hypothesis_score(log_prob, length, alpha, length_reward=0.0):
  """A finished hypothesis's score: log P(Y|X) / lp(Y) + length_reward x |Y|,
  |Y| counting EOS. Takes float32 tensors (``length`` a float tensor) and
  Python numbers alike (the CTranslate2 backend ranks in floats)."""
  return log_prob / _gnmt_penalty(length, alpha) + length_reward * length


def sentence_limits(inputs, extra_length):
  """Per-sentence maximum output length (EOS included): the number of real
  input tokens (EOS included) + extra_length."""
  lengths = ops.sum(ops.cast(ops.not_equal(inputs, PAD_ID), "int32"), 1)
  return lengths + extra_length


def constrained_limits(inputs, extra_length, hypotheses, constraint):
  """(per-hypothesis length limits [batch*hypotheses], the constraint's
  state or None): ``sentence_limits`` raised to the constraint's ``min_limits``."""
  limits = per_hypothesis(sentence_limits(inputs, extra_length), hypotheses)
  if constraint is None:
    return limits, None
  state = constraint.start(inputs, hypotheses)
  needed = constraint.min_limits(state)
  return (limits if needed is None else ops.maximum(limits, needed)), state


def output_length(inputs, extra_length, constraint=None):
  """The longest output a batch can have, EOS included, from shapes only
  (a constant under XLA and JAX): the padded input length +
  ``extra_length``, raised to the constraint's ``length_bound``. It sizes
  the decoding cache and the output ids; each sentence still stops at its
  own limit."""
  longest = ops.shape(inputs)[1] + extra_length
  bound = None if constraint is None else constraint.length_bound(inputs)
  if bound is None:
    return longest
  if isinstance(longest, int) and isinstance(bound, int):
    return max(longest, bound)
  return ops.maximum(longest, bound)


def one_entry(size, index, on, off):
  """float32 [size]: ``on`` at ``index``, ``off`` elsewhere; a constant
  where ``size`` is a Python int (one graph node, not four a step)."""
  if isinstance(size, int):
    row = np.full([size], off, np.float32)
    row[index] = on
    return ops.convert_to_tensor(row)
  return ops.where(ops.equal(ops.arange(size), index), on, off)


def write_column(sequences, step, tokens):
  """``sequences`` int32 [..., max_length] with ``tokens`` [...] written at
  position ``step``: same shape (a select, as XLA and TF Serving take)."""
  here = ops.equal(ops.arange(ops.shape(sequences)[-1]), step)
  return ops.where(here, tokens[..., None], sequences)


def per_hypothesis_state(state, hypotheses):
  """Each row of the encoder ``state`` repeated ``hypotheses`` times (beam
  search's beams; 1 for greedy search and sampling).

  The repeat stays even for 1: where a tensor that the encoder uses (its
  padding bias) entered the decoding loop unchanged, TensorFlow's graph
  rewriter (TF 2.21, CPU; any one of its remapping, arithmetic and
  dependency optimizations off avoids it) could leave a tf.function's
  outputs unset (a 1-layer Transformer's greedy search returned empty
  float32 tensors; ``tests/test_beam_search.py`` checks both searches in a
  function). An identity does not help: it is rewritten away."""
  return keras.tree.map_structure(
      lambda t: ops.repeat(t, hypotheses, axis=0), state)


def step_logits(model, ids, step, cache):
  """float32 logits of the next token with padding never produced.
  ids: [n]. Returns (logits [n, vocab], cache)."""
  logits, cache = model.decode_step(ids, step, cache)
  logits = ops.cast(logits, "float32")
  pad = one_entry(ops.shape(logits)[1], PAD_ID, NEG_INF, 0.0)
  return logits + pad[None], cache


def step_log_probs(model, ids, step, cache, limits, constraint=None,
                    state=None):
  """log-softmax of the next token, with padding never produced, EOS
  forced at each sentence's limit and the constraint's mask applied.
  ids: [n]; limits: [n]."""
  logits, cache = step_logits(model, ids, step, cache)
  vocab = ops.shape(logits)[1]
  mask = (None if constraint is None else
          bias(constraint.allowed(state, step, limits, vocab)))
  if mask is not None and constraint.renormalize:
    logits += mask
  last = ops.equal(step + 1, limits)[:, None]
  only_eos = one_entry(vocab, EOS_ID, 0.0, NEG_INF)
  logits = logits + ops.where(last, only_eos[None], 0.0)
  log_probs = ops.log_softmax(logits, axis=-1)
  if mask is not None and not constraint.renormalize:
    log_probs += mask
  return log_probs, cache


def step_best(model, ids, step, cache, limits, k, constraint=None,
               state=None):
  """The k most likely next tokens of each hypothesis, as
  ``step_log_probs`` followed by a top-k, without the full log-softmax.

  Returns (log-probs float32 [n, k], tokens int32 [n, k], cache); where a
  row's limit is reached its only candidate is EOS with log-prob 0, the
  rest NEG_INF.
  """
  logits, cache = step_logits(model, ids, step, cache)
  k = min(k, logits.shape[-1] or k)
  if constraint is None:
    values, tokens = top_k.top_k_rows(logits, k)
    normalizer = top_k.log_normalizer(logits, values, tokens)
  else:
    masked = logits + bias(constraint.allowed(state, step, limits,
                                              ops.shape(logits)[1]))
    values, tokens = top_k.top_k_rows(masked, k)
    normalizer = (top_k.log_normalizer(masked, values, tokens)
                  if constraint.renormalize else
                  ops.logsumexp(logits, axis=1))
  log_probs = values - normalizer[:, None]
  last = ops.equal(step + 1, limits)[:, None]
  forced = one_entry(k, 0, 0.0, NEG_INF)[None]
  log_probs = ops.where(last, forced, log_probs)
  tokens = ops.where(last, EOS_ID, tokens)
  return log_probs, tokens, cache
