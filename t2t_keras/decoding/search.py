"""The decoding function the decoder, the exporter and t2t-attention run,
chosen by the decode hparams."""

from t2t_keras.decoding.beam_search import beam_search, greedy_decode
from t2t_keras.decoding.sampling import sample_decode


def search_function(model, hparams):
  """``(ids, constraint=None) -> (ids [batch, beams, length], scores
  [batch, beams])`` under decode ``hparams``
  (``decoding.decoder.decode_hparams``): sampling when ``hparams.sampling``
  names a method (one output), greedy decoding when ``beam_size`` is 1,
  else beam search (n-best with ``return_beams``); ``constraint`` is a
  ``decoding.constraints.Constraint`` (or None)."""
  h = hparams

  def search(inputs, constraint=None):
    if h.sampling:
      ids, scores = sample_decode(model, inputs, h.sampling, h.top_k,
                                  h.top_p, h.temperature, h.seed,
                                  h.extra_length, constraint)
    elif h.beam_size == 1:
      ids, scores = greedy_decode(model, inputs, h.extra_length, constraint)
    else:
      return beam_search(model, inputs, h.beam_size, h.alpha, h.extra_length,
                         h.return_beams, constraint)
    return ids[:, None], scores[:, None]
  return search
