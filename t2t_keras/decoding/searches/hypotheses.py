"""The loop every multi-hypothesis search shares, as section 6.1 decodes:
K hypotheses a sentence extended together, the finished ones kept apart,
early termination once no live hypothesis can beat the worst kept one,
EOS forced at each sentence's limit. A search is a strategy on it: its
``select`` picks each step's 2K candidates among every hypothesis's best
tokens, and ranks them; the loop does the rest (the cache's reorder, the
constraint's state, the finished pool, the stop). Beam search is the
strategy of the plain top 2K (``beam_search.py``); a new one, such as a
diverse beam search, writes only its ``select``.

Written in ``keras.ops`` and ``tensor_ops`` (a while loop, gathers,
top-k): core ops on TensorFlow, so a SavedModel of a search loads in stock
TF Serving, and the same search under XLA and ``jax.jit``. Scores are
GNMT's (the paper's [38]): log P(Y|X) / lp(Y), lp(Y) = ((5 + |Y|) /
6)^alpha, |Y| counting EOS, plus ``length_reward`` x |Y|.

A ``constraint`` (``searches.constraints``) rides in the loop beside the
cache (reordered with the same indices), its mask applied to every step's
logits, each sentence's length limit raised to what it needs. Without
one, the graph is the unconstrained search's.
"""

import keras
from keras import ops

from t2t_keras.decoding.searches.search import Search
from t2t_keras.decoding.searches.steps import (constrained_limits,
                                               hypothesis_score,
                                               length_penalty, one_entry,
                                               output_length,
                                               per_hypothesis_state,
                                               step_best, write_column)
from t2t_keras.decoding.searches.tensor_ops import (gather_rows, search_loop,
                                                    take)
from t2t_keras.ids import EOS_ID
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.models.prepared import decoding_model


def top_candidates(step, candidates, tokens, beam):
  """Beam search's step: the 2K best of ``candidates`` (float32 [batch, K x
  per_row]: each hypothesis's log-prob extended by each of its per_row best
  tokens, ``tokens`` int32 [batch, K x per_row]; candidate j extends
  hypothesis j // per_row). Returns (rank, log-probs, index into K x
  per_row), each [batch, 2K]; rank is the log-probs."""
  del step, tokens
  logp, index = ops.top_k(candidates, 2 * beam)
  return logp, logp, index


class MultiHypothesisSearch(Search):
  """A search of ``beam_size`` hypotheses a sentence on the shared loop;
  a subclass writes ``select`` (and ``describe``)."""
  nbest = True

  def select(self, step, candidates, tokens):
    """(rank, log-probs, index), each [batch, 2K], of the candidates the
    step keeps: ``top_candidates``' arguments (K is ``beam_size``) and
    returns; rank orders the live hypotheses, the log-probs score them."""
    return top_candidates(step, candidates, tokens, self.options.beam_size)

  def hypotheses(self):
    return self.options.beam_size

  def __call__(self, model, inputs, constraint=None):
    o = self.options
    with decoding_model(model, o.beam_size) as decoding:
      return hypotheses_loop(decoding, inputs, self.select, o.beam_size,
                             o.alpha, o.extra_length, o.return_beams,
                             constraint, o.length_reward)


def hypotheses_loop(model, inputs, select, beam_size, alpha, extra_length,
                    nbest, constraint, length_reward):
  """The loop of every multi-hypothesis search over ``model`` (a
  ``PreparedModel``); ``select`` is the strategy's step (``MultiHypothesis
  Search.select``). Arguments and returns as ``beam_search``'s."""
  inputs = ops.convert_to_tensor(inputs, "int32")
  batch, beam = ops.shape(inputs)[0], beam_size
  limits, allowed = constrained_limits(inputs, extra_length, beam,
                                        constraint)        # [batch*beam]
  max_length = output_length(inputs, extra_length, constraint)
  state = per_hypothesis_state(model.encode(inputs), beam)
  cache = model.init_cache(state, max_length)
  sentence_limits = limits[::beam]                                 # [batch]
  best_possible_lp = length_penalty(sentence_limits, alpha)
  row_starts = ops.arange(batch)[:, None] * beam                # [batch, 1]

  def reward(length):
    return length_reward * ops.cast(length, "float32")

  most_reward = reward(sentence_limits)

  def body(step, alive_seq, alive_logp, fin_seq, fin_score, allowed, cache):
    previous = ops.reshape(take(alive_seq, ops.maximum(step - 1, 0), axis=2),
                           (-1,))
    previous = ops.where(step > 0, previous, 0)
    log_probs, tokens, cache = step_best(model, previous, step, cache,
                                          limits, 2 * beam, constraint,
                                          allowed)
    per_row = log_probs.shape[-1]  # 2 * beam, or the vocabulary if smaller
    candidates = alive_logp[:, :, None] + ops.reshape(log_probs,
                                                      (-1, beam, per_row))
    candidates = ops.reshape(candidates, (-1, beam * per_row))
    tokens = ops.reshape(tokens, (-1, beam * per_row))
    top_rank, top_logp, top_index = select(step, candidates, tokens)
    top_beam = top_index // per_row
    top_token = gather_rows(tokens, top_index)
    top_seq = write_column(gather_rows(alive_seq, top_beam), step, top_token)
    is_eos = ops.equal(top_token, EOS_ID)
    # Alive: the best K by the strategy's rank that did not end.
    alive_rank = top_rank + ops.where(is_eos, NEG_INF, 0.0)
    new_logp, alive_pick = ops.top_k(alive_rank, beam)
    if top_rank is not top_logp:
      new_logp = gather_rows(top_logp, alive_pick)
    alive_seq = gather_rows(top_seq, alive_pick)
    origin = gather_rows(top_beam, alive_pick)                # [batch, K]
    rows = ops.reshape(origin + row_starts, (-1,))
    cache = model.reorder_cache(cache, rows)
    if constraint is not None:
      allowed = constraint.advance(
          keras.tree.map_structure(lambda t: take(t, rows), allowed),
          ops.reshape(gather_rows(top_token, alive_pick), (-1,)))
    # Finished: the best K of the old ones and those that just ended.
    score = hypothesis_score(top_logp, ops.cast(step + 1, "float32"), alpha,
                             length_reward)
    real = ops.logical_and(is_eos, top_logp > NEG_INF / 2)  # not dead beams
    score = ops.where(real, score, NEG_INF)
    pool_seq = ops.concatenate([fin_seq, top_seq], axis=1)
    pool_score = ops.concatenate([fin_score, score], axis=1)
    fin_score, pick = ops.top_k(pool_score, beam)
    fin_seq = gather_rows(pool_seq, pick)
    return step + 1, alive_seq, new_logp, fin_seq, fin_score, allowed, cache

  def cond(step, alive_seq, alive_logp, fin_seq, fin_score, *_):
    del alive_seq, fin_seq
    # No live beam can beat the best finished one: log-probs only fall, the
    # penalty is largest at the sentence's limit, and so is a positive
    # reward (a negative one is largest at the next step).
    best_alive = alive_logp[:, 0] / best_possible_lp + (
        most_reward if length_reward > 0 else reward(step + 1))
    worst_kept = fin_score[:, beam - 1 if nbest else 0]
    done = ops.all(worst_kept >= best_alive)
    return ops.logical_and(step < max_length, ops.logical_not(done))

  first = one_entry(beam, 0, 0.0, NEG_INF)                      # [beam]
  start = (ops.convert_to_tensor(0, "int32"),
           ops.zeros((batch, beam, max_length), "int32"),
           ops.tile(first[None], (batch, 1)),
           ops.zeros((batch, beam, max_length), "int32"),
           ops.full((batch, beam), NEG_INF, "float32"), allowed or {}, cache)
  _, alive_seq, alive_logp, fin_seq, fin_score, _, _ = search_loop(cond, body,
                                                              start)
  # A sentence with nothing finished (cannot happen with EOS forced at the
  # limit, unless stopped early) falls back to its live beams.
  none_finished = ops.all(fin_score <= NEG_INF / 2, axis=1)
  alive_score = alive_logp / best_possible_lp[:, None] + most_reward[:, None]
  ids = ops.where(none_finished[:, None, None], alive_seq, fin_seq)
  scores = ops.where(none_finished[:, None], alive_score, fin_score)
  return ids, scores
