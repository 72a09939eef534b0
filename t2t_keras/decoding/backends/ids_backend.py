"""What every backend that searches over a model in memory shares (a
checkpoint's, on TensorFlow or JAX): source lines to ids with EOS, cut to
``max_input_length``; target prefixes to ids; batches of similar lengths;
the search's ids back to strings (n-best lists with ``return_beams``).
A subclass implements ``search_rows``."""

from t2t_keras.decoding.backends.backend import Backend
from t2t_keras.decoding.batching import encode_with_eos, length_sorted_chunks
from t2t_keras.decoding.backends.device_batch import decode_batch_size
from t2t_keras.ids import PAD_ID
from t2t_keras.layers.masks import NEG_INF


class IdsBackend(Backend):
  """The ``backend.Backend`` protocol over id searches.

  Args (``decoder.Decoder``'s first seven): the model, the source
  vocabulary, decode hparams, the problem's ``postprocess``, the target
  vocabulary (default: ``vocab``), the constraint every search applies
  and the problem's ``repaired``. The batch is ``device_batch``'s.

  A subclass implements ``search_rows(items, prefixes)``: lists of source
  ids (and of target prefix ids, or None) -> numpy (ids [len(items), beams,
  length], scores [len(items), beams]).
  """
  prefix_kind = "ids"

  def __init__(self, model, vocab, hparams, postprocess=None,
               target_vocab=None, constraint=None, repaired=None):
    super().__init__()
    self.model, self.vocab, self.hparams = model, vocab, hparams
    self.target_vocab = target_vocab or vocab
    self.postprocess, self.repaired = postprocess, repaired
    self.constraint = constraint
    self.batch_size = decode_batch_size(model, hparams)

  def prepare(self, line):
    """(source ids of ``line`` with EOS, cut to ``max_input_length``;
    whether it was cut)."""
    return encode_with_eos(self.vocab, line, self.hparams.max_input_length)

  def encode(self, line):
    """``prepare``'s ids, the cut counted in ``stats.truncated``."""
    ids, cut = self.prepare(line)
    self.stats.truncated += cut
    return ids

  def prepare_prefix(self, prefix):
    return self.target_vocab.encode(prefix)[:self.hparams.max_input_length]

  def batches(self, items):
    return length_sorted_chunks([len(i) for i in items], self.batch_size)

  def search_rows(self, items, prefixes):
    raise NotImplementedError

  def decode_batch(self, items, prefixes):
    ids, scores = self.search_rows(items, prefixes)
    outputs = []
    for row in range(len(items)):
      tokens = int((ids[row, 0] != PAD_ID).sum())
      if self.hparams.return_beams:   # real hypotheses only, never filler
        outputs.append(([(self.target_vocab.decode(ids[row, k]),
                          float(scores[row, k]))
                         for k in range(ids.shape[1])
                         if scores[row, k] > NEG_INF / 2], tokens))
      else:
        outputs.append((self.target_vocab.decode(ids[row, 0]), tokens))
    return outputs
