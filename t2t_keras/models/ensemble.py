"""Several trained models of one problem and vocabulary decoding as one
(fairseq's ``--path a.pt:b.pt``): at every step of beam search, greedy
search, sampling and scoring the next-token distribution is the mean of
the members' distributions, taken in log space,

    log p(y) = log (1/n sum_i p_i(y)) = logsumexp_i log p_i(y) - log n,

fairseq's rule. The ensemble keeps the model contract (``base``): its
encoder state and cache are tuples of the members', each member with its
own cache, so the searches run it unchanged. An ensemble of a model with
itself gives that model's outputs and scores.
"""

import math

from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.models.base import Seq2SeqModel


def _mean_of_probs(log_probs):
  """[n members of float32 [..., vocab] log-probs] -> the log of their
  mean probability, [..., vocab]."""
  if len(log_probs) == 1:
    return log_probs[0]
  return (ops.logsumexp(ops.stack(log_probs), axis=0) -
          math.log(len(log_probs)))


def _log_softmax(logits):
  return ops.log_softmax(ops.cast(logits, "float32"), axis=-1)


class MemberMean:
  """The contract's decoding over ``self.members`` (each keeping it): the
  state and cache are tuples of the members', the step's log-probs their
  mean probability's log. Shared by ``Ensemble`` and the ensemble prepared
  for decoding (``models.prepared``)."""

  def encode(self, inputs, training=None):
    return tuple(m.encode(inputs, training=training) for m in self.members)

  def init_cache(self, state, max_length):
    return tuple(m.init_cache(s, max_length)
                 for m, s in zip(self.members, state))

  def decode_step(self, ids, step, cache):
    steps = [m.decode_step(ids, step, c) for m, c in zip(self.members, cache)]
    return (_mean_of_probs([_log_softmax(logits) for logits, _ in steps]),
            tuple(c for _, c in steps))

  def reorder_cache(self, cache, indices):
    return tuple(m.reorder_cache(c, indices)
                 for m, c in zip(self.members, cache))


class Ensemble(MemberMean, Seq2SeqModel):
  """The members (built ``Seq2SeqModel``s with the same vocabulary sizes)
  as one model; its outputs are normalized log-probabilities."""

  def __init__(self, members):
    if not members:
      raise UserError("an ensemble needs at least one model")
    # The members' precision, where they share one, is the ensemble's: log
    # lines say what it computes in, and the searches cast its weights to
    # that dtype once (models.prepared) rather than at every step.
    policies = {m.dtype_policy.name for m in members}
    super().__init__(dtype=members[0].dtype_policy if len(policies) == 1
                     else None)
    sizes = {(getattr(m, "input_vocab_size", None),
              getattr(m, "target_vocab_size", None)) for m in members}
    if len(sizes) > 1:
      raise UserError("ensemble members must share their vocabularies; "
                      f"their (input, target) sizes: {sorted(sizes)}")
    self.members = list(members)
    self.input_vocab_size, self.target_vocab_size = sizes.pop()
    self.built = True

  def call(self, features, training=False):
    return _mean_of_probs([_log_softmax(m(features, training=training))
                           for m in self.members])
