"""Beam search and greedy decoding over any model that keeps the contract
of ``models.base.Seq2SeqModel`` (encode, init_cache, decode_step,
reorder_cache), as in section 6.1: beam 4, length penalty alpha 0.6, maximum
output length input length + 50, early termination.

Written with core TensorFlow ops only (tf.while_loop, gather, top_k), so a
SavedModel of it loads in stock TF Serving. Scores are GNMT's (the paper's
[38]): log P(Y|X) / lp(Y), lp(Y) = ((5 + |Y|) / 6)^alpha, |Y| counting EOS.
Under a mixed dtype policy both searches read the model's weights cast to
the compute dtype once a batch (``weights_once``), not once a step.

Each search takes an optional ``constraint`` (``decoding.constraints``):
its state rides in the loop beside the cache (beam search reorders it with
the same indices), its mask is applied to every step's logits, and each
sentence's length limit is raised to what the constraint needs. Without
one, the graph is the unconstrained search's.
"""

import tensorflow as tf

from t2t_keras.decoding import top_k
from t2t_keras.decoding.constraints import NEG_INF, bias, per_hypothesis
from t2t_keras.decoding.weights_once import reading_weights_once
from t2t_keras.ids import EOS_ID, PAD_ID

# Section 6.1's settings, the defaults everywhere (decode_hparams too).
BEAM_SIZE, ALPHA, EXTRA_LENGTH = 4, 0.6, 50


def length_penalty(length, alpha):
  return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


def _limits(inputs, extra_length):
  """Per-sentence maximum output length (EOS included): the number of real
  input tokens (EOS included) + extra_length."""
  lengths = tf.reduce_sum(tf.cast(tf.not_equal(inputs, PAD_ID), tf.int32), 1)
  return lengths + extra_length


def _constrained_limits(inputs, extra_length, hypotheses, constraint):
  """(per-hypothesis length limits [batch*hypotheses], the constraint's
  state or None): ``_limits`` raised to the constraint's ``min_limits``."""
  limits = per_hypothesis(_limits(inputs, extra_length), hypotheses)
  if constraint is None:
    return limits, None
  state = constraint.start(inputs, hypotheses)
  needed = constraint.min_limits(state)
  return (limits if needed is None else tf.maximum(limits, needed)), state


def _invariant(t, free):
  """The shape of loop variable ``t`` with its first ``free`` axes free."""
  if isinstance(t, tf.TensorArray):
    return t.element_shape
  dims = t.shape.as_list()
  free = min(free, len(dims))
  return tf.TensorShape([None] * free + dims[free:])


def _loop(cond, body, start):
  """tf.while_loop over ``start`` whose last element is the model's cache.
  Every cache tensor may change size along all axes but its last (the
  contract of ``models.base``: self-attention caches grow a step at a
  time); the other loop variables keep their shapes but the batch axis
  (the model's ops need not keep it static)."""
  invariants = tuple(tf.nest.map_structure(lambda t: _invariant(t, 1), x)
                     for x in start[:-1])
  invariants += (tf.nest.map_structure(
      lambda t: _invariant(t, t.shape.rank - 1), start[-1]),)
  return tf.while_loop(cond, body, start, shape_invariants=invariants)


def _per_hypothesis(state, hypotheses):
  """Each row of the encoder ``state`` repeated ``hypotheses`` times (beam
  search's beams; 1 for greedy search and sampling).

  The repeat stays even for 1: where a tensor that the encoder uses (its
  padding bias) entered the decoding loop unchanged, TensorFlow's graph
  rewriter (TF 2.21, CPU; any one of its remapping, arithmetic and
  dependency optimizations off avoids it) could leave a tf.function's
  outputs unset (a 1-layer Transformer's greedy search returned empty
  float32 tensors; ``tests/test_beam_search.py`` checks both searches in a
  function). An identity does not help: it is rewritten away."""
  return tf.nest.map_structure(
      lambda t: tf.repeat(t, hypotheses, axis=0), state)


def _step_logits(model, ids, step, cache):
  """float32 logits of the next token with padding never produced.
  ids: [n]. Returns (logits [n, vocab], cache)."""
  logits, cache = model.decode_step(ids, step, cache)
  logits = tf.cast(logits, tf.float32)
  pad = tf.one_hot(PAD_ID, tf.shape(logits)[1], on_value=NEG_INF,
                   off_value=0.0)
  return logits + pad[None], cache


def _step_log_probs(model, ids, step, cache, limits, constraint=None,
                    state=None):
  """log-softmax of the next token, with padding never produced, EOS
  forced at each sentence's limit and the constraint's mask applied.
  ids: [n]; limits: [n]."""
  logits, cache = _step_logits(model, ids, step, cache)
  vocab = tf.shape(logits)[1]
  mask = (None if constraint is None else
          bias(constraint.allowed(state, step, limits, vocab)))
  if mask is not None and constraint.renormalize:
    logits += mask
  last = tf.equal(step + 1, limits)[:, None]
  only_eos = tf.where(tf.equal(tf.range(vocab), EOS_ID), 0.0, NEG_INF)
  logits = logits + tf.where(last, only_eos[None], 0.0)
  log_probs = tf.nn.log_softmax(logits)
  if mask is not None and not constraint.renormalize:
    log_probs += mask
  return log_probs, cache


def _step_best(model, ids, step, cache, limits, k, constraint=None,
               state=None):
  """The k most likely next tokens of each hypothesis, as
  ``_step_log_probs`` followed by a top-k, without the full log-softmax.

  Returns (log-probs float32 [n, k], tokens int32 [n, k], cache); where a
  row's limit is reached its only candidate is EOS with log-prob 0, the
  rest NEG_INF.
  """
  logits, cache = _step_logits(model, ids, step, cache)
  k = min(k, logits.shape[-1] or k)
  if constraint is None:
    values, tokens = top_k.top_k_rows(logits, k)
    normalizer = top_k.log_normalizer(logits, values[:, 0], tokens[:, 0])
  else:
    masked = logits + bias(constraint.allowed(state, step, limits,
                                              tf.shape(logits)[1]))
    values, tokens = top_k.top_k_rows(masked, k)
    normalizer = (top_k.log_normalizer(masked, values[:, 0], tokens[:, 0])
                  if constraint.renormalize else
                  tf.reduce_logsumexp(logits, axis=1))
  log_probs = values - normalizer[:, None]
  last = tf.equal(step + 1, limits)[:, None]
  forced = tf.one_hot(0, k, on_value=0.0, off_value=NEG_INF)[None]
  log_probs = tf.where(last, forced, log_probs)
  tokens = tf.where(last, EOS_ID, tokens)
  return log_probs, tokens, cache


@reading_weights_once
def token_by_token(model, inputs, choose, extra_length=EXTRA_LENGTH,
                   constraint=None):
  """One hypothesis per sentence, each token picked by ``choose``.

  Args:
    model: a ``Seq2SeqModel``.
    inputs: int [batch, length].
    choose: ``(log_probs [batch, vocab], step) -> int32 [batch]``, the next
      tokens (argmax for greedy decoding; see ``decoding.sampling``).
    extra_length: outputs stop at input length + this.
    constraint: optional ``decoding.constraints.Constraint``.
  Returns (ids [batch, max_length] 0-padded after EOS, the model's log-prob of
  each output [batch]; under a renormalizing constraint, the log-prob among
  the allowed tokens).
  """
  inputs = tf.convert_to_tensor(inputs)
  batch = tf.shape(inputs)[0]
  limits, allowed = _constrained_limits(inputs, extra_length, 1, constraint)
  max_length = tf.reduce_max(limits)
  cache = model.init_cache(_per_hypothesis(model.encode(inputs), 1),
                           max_length)

  def body(step, previous, done, ids, score, allowed, cache):
    log_probs, cache = _step_log_probs(model, previous, step, cache, limits,
                                       constraint, allowed)
    token = tf.cast(choose(log_probs, step), tf.int32)
    token = tf.where(done, PAD_ID, token)
    gained = tf.gather(log_probs, token, axis=1, batch_dims=1)
    score = score + tf.where(done, 0.0, gained)
    ids = ids.write(step, token)
    done = tf.logical_or(done, tf.equal(token, EOS_ID))
    if constraint is not None:
      allowed = constraint.advance(allowed, token)
    return step + 1, token, done, ids, score, allowed, cache

  def cond(step, previous, done, *_):
    del previous
    return tf.logical_and(step < max_length,
                          tf.logical_not(tf.reduce_all(done)))

  start = (tf.constant(0), tf.zeros([batch], tf.int32),
           tf.zeros([batch], tf.bool),
           tf.TensorArray(tf.int32, size=0, dynamic_size=True),
           tf.zeros([batch], tf.float32), allowed or {}, cache)
  _, _, _, ids, score, _, _ = _loop(cond, body, start)
  return tf.transpose(ids.stack()), score


def greedy_decode(model, inputs, extra_length=EXTRA_LENGTH, constraint=None):
  """Argmax decoding. inputs: int [batch, length].

  Returns (ids [batch, max_length] 0-padded after EOS, log-prob [batch]).
  """
  return token_by_token(
      model, inputs,
      lambda log_probs, _: tf.argmax(log_probs, -1, output_type=tf.int32),
      extra_length, constraint)


@reading_weights_once
def beam_search(model, inputs, beam_size=BEAM_SIZE, alpha=ALPHA,
                extra_length=EXTRA_LENGTH, nbest=False, constraint=None):
  """Beam search. inputs: int [batch, length].

  With ``nbest`` the search goes on until ``beam_size`` hypotheses have
  finished (or the length limit), not only the best one, so that all of
  them are real; where fewer exist, the rest score about NEG_INF.
  ``constraint``: optional ``decoding.constraints.Constraint``.

  Returns (ids [batch, beam_size, max_length], 0-padded after EOS, best
  first; scores [batch, beam_size], length-penalized log-probabilities).
  """
  inputs = tf.convert_to_tensor(inputs)
  batch, beam = tf.shape(inputs)[0], beam_size
  limits, allowed = _constrained_limits(inputs, extra_length, beam,
                                        constraint)        # [batch*beam]
  max_length = tf.reduce_max(limits)
  state = _per_hypothesis(model.encode(inputs), beam)
  cache = model.init_cache(state, max_length)
  sentence_limits = limits[::beam]                                 # [batch]
  best_possible_lp = length_penalty(sentence_limits, alpha)

  def write(sequences, step, tokens):
    here = tf.equal(tf.range(max_length), step)[None, None, :]
    return tf.where(here, tokens[:, :, None], sequences)

  def body(step, alive_seq, alive_logp, fin_seq, fin_score, allowed, cache):
    previous = tf.reshape(
        tf.gather(alive_seq, tf.maximum(step - 1, 0), axis=2), [-1])
    previous = tf.where(step > 0, previous, tf.zeros_like(previous))
    log_probs, tokens, cache = _step_best(model, previous, step, cache,
                                          limits, 2 * beam, constraint,
                                          allowed)
    per_row = log_probs.shape[-1]  # 2 * beam, or the vocabulary if smaller
    candidates = alive_logp[:, :, None] + tf.reshape(log_probs,
                                                     [batch, beam, per_row])
    flat = tf.reshape(candidates, [batch, beam * per_row])
    top_logp, top_index = tf.math.top_k(flat, k=2 * beam)
    top_beam = top_index // per_row
    top_token = tf.gather(tf.reshape(tokens, [batch, beam * per_row]),
                          top_index, batch_dims=1)
    top_seq = write(tf.gather(alive_seq, top_beam, batch_dims=1), step,
                    top_token)
    is_eos = tf.equal(top_token, EOS_ID)
    # Alive: the best K that did not end.
    alive_rank = top_logp + tf.where(is_eos, NEG_INF, 0.0)
    new_logp, alive_pick = tf.math.top_k(alive_rank, k=beam)
    alive_seq = tf.gather(top_seq, alive_pick, batch_dims=1)
    origin = tf.gather(top_beam, alive_pick, batch_dims=1)    # [batch, K]
    rows = tf.reshape(origin + tf.range(batch)[:, None] * beam, [-1])
    cache = model.reorder_cache(cache, rows)
    if constraint is not None:
      allowed = constraint.advance(
          tf.nest.map_structure(lambda t: tf.gather(t, rows), allowed),
          tf.reshape(tf.gather(top_token, alive_pick, batch_dims=1), [-1]))
    # Finished: the best K of the old ones and those that just ended.
    score = top_logp / length_penalty(step + 1, alpha)
    real = tf.logical_and(is_eos, top_logp > NEG_INF / 2)  # not from dead beams
    score = tf.where(real, score, NEG_INF)
    pool_seq = tf.concat([fin_seq, top_seq], axis=1)
    pool_score = tf.concat([fin_score, score], axis=1)
    fin_score, pick = tf.math.top_k(pool_score, k=beam)
    fin_seq = tf.gather(pool_seq, pick, batch_dims=1)
    return step + 1, alive_seq, new_logp, fin_seq, fin_score, allowed, cache

  def cond(step, alive_seq, alive_logp, fin_seq, fin_score, *_):
    del alive_seq, fin_seq
    # No live beam can beat the best finished one: log-probs only fall and
    # the penalty is largest at the sentence's limit.
    best_alive = alive_logp[:, 0] / best_possible_lp
    worst_kept = fin_score[:, beam - 1 if nbest else 0]
    done = tf.reduce_all(worst_kept >= best_alive)
    return tf.logical_and(step < max_length, tf.logical_not(done))

  first = tf.concat([tf.zeros([1]), tf.fill([beam - 1], NEG_INF)], 0)
  start = (tf.constant(0), tf.zeros([batch, beam, max_length], tf.int32),
           tf.tile(first[None], [batch, 1]),
           tf.zeros([batch, beam, max_length], tf.int32),
           tf.fill([batch, beam], NEG_INF), allowed or {}, cache)
  _, alive_seq, alive_logp, fin_seq, fin_score, _, _ = _loop(cond, body,
                                                              start)
  # A sentence with nothing finished (cannot happen with EOS forced at the
  # limit, unless stopped early) falls back to its live beams.
  none_finished = tf.reduce_all(fin_score <= NEG_INF / 2, axis=1)
  alive_score = alive_logp / best_possible_lp[:, None]
  ids = tf.where(none_finished[:, None, None], alive_seq, fin_seq)
  scores = tf.where(none_finished[:, None], alive_score, fin_score)
  return ids, scores
