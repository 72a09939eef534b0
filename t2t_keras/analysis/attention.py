"""The attention weights of a trained model on one sentence pair.

The target is the model's own translation (beam search, as t2t-decoder) or
a given text (forced). One eager full pass over (source, target) records
every attention layer (``layers.attention_record``); the model names its
layers by kind (``Seq2SeqModel.attention_layers``).
"""

import dataclasses

import numpy as np
import tensorflow as tf

from t2t_keras.decoding.search import search_function
from t2t_keras.ids import EOS_ID
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


def _with_eos(ids, limit=None):
  ids = [int(i) for i in ids]
  if EOS_ID in ids:
    ids = ids[:ids.index(EOS_ID)]
  ids = [i for i in ids if i != 0]
  if limit is not None:
    ids = ids[:limit - 1]
  return ids + [EOS_ID]


class AttentionReader:
  """Reads attention maps from ``model`` (a ``Seq2SeqModel`` with
  ``attention_layers``) for text encoded with ``vocab`` (source) and
  ``target_vocab``; outputs come from beam search under ``decode`` (an
  HParams from ``decoding.decoder.decode_hparams``)."""

  def __init__(self, model, vocab, decode, target_vocab=None):
    self.model, self.vocab, self.decode = model, vocab, decode
    self.target_vocab = target_vocab or vocab
    self.layers = model.attention_layers()
    self._search = tf.function(
        search_function(model, decode),
        input_signature=[tf.TensorSpec([None, None], tf.int32)])

  def translate(self, source_ids):
    """The model's best output ids (EOS-terminated) for one source."""
    ids, _ = self._search(tf.constant([source_ids], tf.int32))
    return _with_eos(ids.numpy()[0, 0])

  def read(self, source, target=None):
    """``AttentionMaps`` for the text ``source`` and the model's output, or
    ``target`` when given."""
    source_ids = _with_eos(self.vocab.encode(source),
                           self.decode.max_input_length)
    if target is None:
      target_ids = self.translate(source_ids)
    else:
      target_ids = _with_eos(self.target_vocab.encode(target))
    features = {"inputs": tf.constant([source_ids], tf.int32),
                "targets": tf.constant([target_ids], tf.int32)}
    with recording() as recorded:
      self.model(features, training=False)
    weights = {}
    for kind in ATTENTION_KINDS:
      if kind in self.layers:
        weights[kind] = np.stack([np.asarray(recorded[layer])[0]
                                  for layer in self.layers[kind]])
    return AttentionMaps(
        source=source,
        target=self.target_vocab.decode(target_ids),
        source_tokens=self.vocab.pieces(source_ids),
        target_tokens=self.target_vocab.pieces(target_ids),
        weights=weights)
