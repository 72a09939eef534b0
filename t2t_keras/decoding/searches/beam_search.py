"""Beam search, as in section 6.1 (beam 4, length penalty alpha 0.6,
maximum output length input length + 50, early termination): the shared
loop (``hypotheses.py``) with its plain top-2K step, over any model that
keeps the contract of ``models.base.Seq2SeqModel``, decoding the model
prepared for decoding (``models.prepared``), read once a batch.

``length_reward`` adds a reward a token to finished hypotheses (Marian's
word penalty with the sign turned; 0, the paper's, by default): where
alpha barely moves long outputs (lp changes by ~alpha / (5 + |Y|) a
token), the reward buys each token the same.
"""

from t2t_keras import registry
from t2t_keras.decoding.searches.hypotheses import (MultiHypothesisSearch,
                                                    hypotheses_loop,
                                                    top_candidates)
from t2t_keras.decoding.searches.steps import ALPHA, BEAM_SIZE, EXTRA_LENGTH
from t2t_keras.models.prepared import decoding_model


def beam_search(model, inputs, beam_size=BEAM_SIZE, alpha=ALPHA,
                extra_length=EXTRA_LENGTH, nbest=False, constraint=None,
                length_reward=0.0):
  """Beam search. inputs: int [batch, length].

  With ``nbest`` the search goes on until ``beam_size`` hypotheses have
  finished (or the length limit), not only the best one, so that all of
  them are real; where fewer exist, the rest score about NEG_INF.
  ``constraint``: optional ``decoding.searches.constraints.Constraint``.
  ``length_reward``: added to a finished hypothesis's score per token.

  Returns (ids [batch, beam_size, max_length], 0-padded after EOS, best
  first; scores [batch, beam_size], length-penalized log-probabilities
  plus the reward).
  """
  with decoding_model(model, beam_size) as decoding:
    return hypotheses_loop(
        decoding, inputs,
        lambda step, candidates, tokens: top_candidates(
            step, candidates, tokens, beam_size),
        beam_size, alpha, extra_length, nbest, constraint, length_reward)


@registry.register_search("beam")
class BeamSearch(MultiHypothesisSearch):
  """Beam search (``beam_size``, ``alpha``; n-best with ``return_beams``):
  the shared loop's plain top 2K."""

  def describe(self):
    o = self.options
    reward = f", length reward {o.length_reward}" if o.length_reward else ""
    return (f"beam {o.beam_size}, alpha {o.alpha}{reward}, extra length "
            f"{o.extra_length}")
