"""The attention weights of a trained model on one sentence pair.

The target is the model's own translation (t2t-decoder's search) or
a given text (forced). One eager full pass over (source, target) records
every attention layer (``layers.attention_record``); the model names its
layers by kind (``Seq2SeqModel.attention_layers``).
"""

import dataclasses

import numpy as np

from t2t_keras.decoding.batching import padded
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers.attention_record import recording
from t2t_keras.models.base import ATTENTION_KINDS


@dataclasses.dataclass
class AttentionMaps:
  """One sentence pair's attention.

  source_tokens: the source pieces, EOS last (length S).
  target_tokens: the target pieces, EOS last (length T).
  weights: {kind: float32 [layers, heads, queries, keys]}: encoder_self
    [L, h, S, S], decoder_self [L, h, T, T], encoder_decoder [L, h, T, S].
    Query t of the decoder kinds is the position that predicts target t
    (its input is target t-1), so row t is labelled with target token t.
  """
  source: str
  target: str
  source_tokens: list
  target_tokens: list
  weights: dict

  def axes(self, kind):
    """(query labels, key labels) of ``kind``."""
    queries = self.source_tokens if kind == "encoder_self" else \
        self.target_tokens
    keys = self.target_tokens if kind == "decoder_self" else \
        self.source_tokens
    return queries, keys


def _until_eos(ids):
  """Search output ids -> the ids up to and with the first EOS."""
  ids = [int(i) for i in ids if i != PAD_ID]
  return ids[:ids.index(EOS_ID) + 1] if EOS_ID in ids else ids + [EOS_ID]


class AttentionReader:
  """Reads attention maps from ``model`` (a ``Seq2SeqModel`` with
  ``attention_layers``) for text encoded with ``vocab`` (source) and
  ``target_vocab``; outputs come from the decoder's search under ``decode``
  (an HParams from ``decoding.backends.decoder.decode_hparams``)."""

  def __init__(self, model, vocab, decode, target_vocab=None):
    self.model = model
    self.layers = model.attention_layers()
    self.decoder = Decoder(model, vocab, decode, target_vocab=target_vocab)

  def read(self, source, target=None):
    """``AttentionMaps`` for the text ``source`` and the model's output, or
    ``target`` when given."""
    vocab, target_vocab = self.decoder.vocab, self.decoder.target_vocab
    source_ids = self.decoder.encode(source)
    if target is None:
      ids, _ = self.decoder.search(padded([source_ids]))
      target_ids = _until_eos(ids[0, 0])
    else:
      target_ids = target_vocab.encode(target) + [EOS_ID]
    features = {"inputs": padded([source_ids]),
                "targets": padded([target_ids])}
    with recording() as recorded:
      self.model(features, training=False)
    weights = {}
    for kind in ATTENTION_KINDS:
      if kind in self.layers:
        weights[kind] = np.stack([np.asarray(recorded[layer])[0]
                                  for layer in self.layers[kind]])
    return AttentionMaps(
        source=source,
        target=target_vocab.decode(target_ids),
        source_tokens=vocab.pieces(source_ids),
        target_tokens=target_vocab.pieces(target_ids),
        weights=weights)
