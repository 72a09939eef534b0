"""Decoding through a CTranslate2 export (``t2t-decoder --ct2_model_dir``),
with the lines handled as by ``Decoder``: the same source cut and EOS,
length-sorted batches, outputs back in input order, one line per input.

A CTranslate2 model directory from ``export.ctranslate2`` holds CTranslate2's
files (``model.bin``, ``config.json``, the vocabularies) and ours: the two
SentencePiece models and the decode hparams the export was made with.
"""

import os

from t2t_keras.io import json_files
from t2t_keras.data.t2t_subword import T2TSubwordVocab
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.decode_defaults import COMPUTE_TYPES
from t2t_keras.decoding.backends.backend import Backend
from t2t_keras.decoding.batching import encode_with_eos, equal_length_chunks
from t2t_keras.decoding.options import decode_hparams, sentences_a_batch
from t2t_keras.decoding.searches.search import search_name
from t2t_keras.decoding.searches.steps import hypothesis_score
from t2t_keras.errors import UserError
from t2t_keras.ids import EOS_ID, PAD_ID

VOCAB_FILES = ("source.spm.model", "target.spm.model")
# A run imported from tensor2tensor (t2t-import) has its subword files.
T2T_VOCAB_FILES = ("source.subwords", "target.subwords")


def vocab_files(vocabs):
  """The (source, target) file names of ``vocabs`` in an export."""
  return T2T_VOCAB_FILES if isinstance(vocabs[0], T2TSubwordVocab) \
      else VOCAB_FILES


def load_vocabs(path):
  """The (source, target) vocabularies an export ``path`` holds."""
  if os.path.isfile(os.path.join(path, T2T_VOCAB_FILES[0])):
    return tuple(T2TSubwordVocab.load(os.path.join(path, name))
                 for name in T2T_VOCAB_FILES)
  return tuple(SubwordVocab.load(os.path.join(path, name))
               for name in VOCAB_FILES)
# The searches CTranslate2 has: its own beam search, greedy search and
# sampling under our settings.
CT2_SEARCHES = ("beam", "greedy", "sample")
SETTINGS_FILE = "t2t_keras.json"


class Ct2Decoder(Backend):
  """Decodes strings through a CTranslate2 export, under the
  ``backend.Backend`` protocol (no target prefixes).

  Args:
    path: the export directory.
    overrides: decode hparams overrides (``a=1,b=2``) over the export's.
    compute_type: CTranslate2's (float32 weights run as ``int8`` etc.).
    postprocess: ``(text, source) -> line`` (a problem's ``postprocess``).
    threads: intra-op threads (0: one per CPU core).
  """

  def __init__(self, path, overrides="", compute_type="default",
               postprocess=None, threads=0):
    super().__init__()
    settings = os.path.join(path, SETTINGS_FILE)
    if not os.path.isfile(settings):
      raise UserError(f"--ct2_model_dir {path} is not a t2t-exporter "
                      f"--format=ctranslate2 export (no {SETTINGS_FILE})")
    if compute_type not in COMPUTE_TYPES:
      raise UserError(f"--ct2_compute_type={compute_type}: expected one of "
                      + ", ".join(COMPUTE_TYPES))
    try:
      import ctranslate2
    except ImportError:
      raise UserError("--ct2_model_dir needs the ctranslate2 package: "
                      "pip install -e \".[ct2]\"") from None
    exported = json_files.load(settings, ("decode_hparams",),
                               "export the run again")["decode_hparams"]
    self.hparams = decode_hparams(overrides, exported)
    if self.hparams.weights != "float32":
      raise UserError(f"weights={self.hparams.weights} rounds a checkpoint's "
                      "or a SavedModel's weights; CTranslate2 quantizes "
                      "with --ct2_compute_type=int8")
    if search_name(self.hparams) not in CT2_SEARCHES:
      raise UserError(f"search={search_name(self.hparams)} runs on checkpoints "
                      "and SavedModels only; CTranslate2 decodes with "
                      + ", ".join(CT2_SEARCHES))
    self.vocab, self.target_vocab = load_vocabs(path)
    self.source_pieces = self.vocab.pieces(range(self.vocab.size))
    self.target_ids = {p: i for i, p in enumerate(
        self.target_vocab.pieces(range(self.target_vocab.size)))}
    self.pad_piece, self.eos_piece = self.target_vocab.pieces([PAD_ID, EOS_ID])
    self.translator = ctranslate2.Translator(
        path, device="cpu", compute_type=compute_type,
        intra_threads=threads or os.cpu_count() or 0)
    if search_name(self.hparams) == "sample":
      ctranslate2.set_random_seed(self.hparams.seed)
    self.postprocess = postprocess

  def _options(self, source_length):
    h = self.hparams
    # A batch's sources have one length, so that CTranslate2's one limit is
    # each sentence's: input + extra_length tokens with EOS, as ``Decoder``.
    options = dict(max_decoding_length=source_length + h.extra_length - 1,
                   max_input_length=0, return_scores=True,
                   return_end_token=True,
                   suppress_sequences=[[self.pad_piece]])
    if search_name(h) == "sample":
      options.update(beam_size=1, sampling_topk=h.top_k if (
          h.sampling or "topk") == "topk" else 0, sampling_topp=h.top_p,
                     sampling_temperature=h.temperature)
    else:
      # Every finished hypothesis, to rank them by our length penalty.
      options.update(beam_size=h.beam_size, length_penalty=h.alpha,
                     num_hypotheses=h.beam_size)
    return options

  def _ranked(self, output):
    """(pieces, score) of a beam-search result, best first, by the paper's
    length penalty ((5 + |Y|) / 6)^alpha and length reward
    (``steps.hypothesis_score``): CTranslate2 divides log-probs by
    |Y|^alpha, |Y| counting EOS, and has no reward, so the reward only
    reorders the hypotheses its search found."""
    alpha = self.hparams.alpha
    if search_name(self.hparams) == "sample":
      return list(zip(output.hypotheses, output.scores))
    ranked = []
    for pieces, score in zip(output.hypotheses, output.scores):
      finished = bool(pieces) and pieces[-1] == self.eos_piece
      log_prob = score * max(len(pieces), 1) ** alpha
      # One stopped at the limit gets a forced EOS (probability 1).
      length = len(pieces) + (not finished)
      ranked.append((pieces[:len(pieces) - finished],
                     hypothesis_score(log_prob, length, alpha,
                                      self.hparams.length_reward)))
    return sorted(ranked, key=lambda r: -r[1])

  def prepare(self, line):
    return encode_with_eos(self.vocab, line, self.hparams.max_input_length)

  def batches(self, items):
    return equal_length_chunks([len(i) for i in items],
                               sentences_a_batch(self.hparams))

  def decode_batch(self, items, prefixes):
    del prefixes   # prefix_kind None: the base class refuses them
    batch = [[self.source_pieces[i] for i in ids] for ids in items]
    outputs = []
    for output in self.translator.translate_batch(
        batch, **self._options(len(batch[0]))):
      ranked = self._ranked(output)
      text = self._text(ranked[0][0])
      outputs.append(([(self._text(h), float(s)) for h, s in ranked]
                      if self.hparams.return_beams else text,
                      len(ranked[0][0]) + 1))
    return outputs

  def _text(self, pieces):
    return self.target_vocab.decode([self.target_ids[p] for p in pieces])
