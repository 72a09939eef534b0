"""Subword vocabularies: SentencePiece models built from training text,
usable in Python and, through tensorflow-text, as ops inside a TF graph.

The settings make encoding lossless: no normalization (``identity``),
whitespace kept as it is, and unseen characters spelled as UTF-8 bytes
(``byte_fallback``), so ``decode(encode(s)) == s`` for every string s,
accents and characters never seen in training included. A lowercasing
vocabulary (``build(..., lowercase=True)``) carries a normalization rule for
every character that Python's ``str.lower`` changes, so that
``decode(encode(s)) == s.lower()`` (in the TF graph too, except that
tensorflow-text's detokenizer drops leading spaces, whatever the case).

Ids: 0 padding, 1 EOS, 2 unknown (never produced, thanks to byte fallback).
"""

import io
import os
import tempfile

from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.io import files
from t2t_keras.io.logs import native_stderr_silenced
from t2t_keras.io.outputs import output_file

UNK_ID = 2
MODEL_TYPES = ("bpe", "unigram")
# SentencePiece skips training sentences longer than this many bytes.
_MAX_SENTENCE_BYTES = 1 << 14


class SubwordVocab:
  """A SentencePiece model.

  Args:
    model_proto: the serialized model (bytes), as saved by ``save``.
  """

  def __init__(self, model_proto):
    import sentencepiece
    self.model_proto = bytes(model_proto)
    self._sp = sentencepiece.SentencePieceProcessor(
        model_proto=self.model_proto)
    if (self._sp.pad_id(), self._sp.eos_id()) != (PAD_ID, EOS_ID):
      raise UserError("not a t2t_keras vocabulary: padding and EOS must be "
                       f"ids {PAD_ID} and {EOS_ID}")
    self._tf_tokenizer = None
    self._inside = None

  # -- building and files ---------------------------------------------------
  @classmethod
  def build(cls, texts, vocab_size, model_type="bpe", split_by_script=True,
            symbols=(), lowercase=False):
    """Trains a model of ``vocab_size`` pieces on an iterable of strings.

    ``split_by_script=False`` lets a piece join letters with punctuation
    ("(NP" one piece, not "(" + "NP"); by default SentencePiece never merges
    across a change of Unicode script. ``symbols`` are pieces the model
    always keeps whole (SentencePiece's user-defined symbols; "\u2581(NP"
    is "(NP" after a space).

    When the texts are too small for that many pieces, the model is smaller
    (a soft limit) rather than an error. The same texts give the same model,
    byte for byte. ``lowercase=True``: the model lowercases what it encodes
    (its training texts included), as ``str.lower`` does.
    """
    import sentencepiece
    if model_type not in MODEL_TYPES:
      raise UserError(f"model_type must be one of {MODEL_TYPES}, got "
                       f"{model_type!r}")
    model = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
      rule = {"normalization_rule_name": "identity"}
      if lowercase:
        rule = {"normalization_rule_tsv": os.path.join(tmp, "lower.tsv")}
        _write_lowercase_rules(rule["normalization_rule_tsv"])
      try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(texts), model_writer=model,
            vocab_size=int(vocab_size), model_type=model_type,
            remove_extra_whitespaces=False,
            byte_fallback=True, character_coverage=1.0,
            pad_id=PAD_ID, eos_id=EOS_ID, unk_id=UNK_ID, bos_id=-1,
            max_sentence_length=_MAX_SENTENCE_BYTES, num_threads=2,
            hard_vocab_limit=False, split_by_unicode_script=split_by_script,
            user_defined_symbols=list(symbols), minloglevel=2, **rule)
      except RuntimeError as e:
        raise UserError(
            f"cannot build a vocabulary of {vocab_size} pieces: "
            f"{str(e).split('] ')[-1]} (every vocabulary holds 256 byte "
            "pieces and 3 special ids besides the characters of the "
            "text)") from None
    proto = model.getvalue()
    return cls(_named_lowercase(proto) if lowercase else proto)

  @classmethod
  def load(cls, path):
    if not os.path.isfile(path):
      raise MissingFileError(f"vocabulary file {path} does not exist; run "
                              "t2t-datagen for this problem first")
    with open(path, "rb") as f:
      proto = f.read()
    try:
      return cls(proto)
    except RuntimeError:
      raise UserError(f"{path} is damaged: not a SentencePiece model; run "
                      "t2t-datagen again in a new --data_dir (the shards "
                      "beside it were encoded with the original)") from None

  def save(self, path):
    """Writes the model atomically (a reader never sees half a file)."""
    with output_file(path) as f:
      f.write(self.model_proto)

  # -- Python ---------------------------------------------------------------
  @property
  def size(self):
    return self._sp.get_piece_size()

  @property
  def lowercases(self):
    """True for a vocabulary built with ``lowercase=True``."""
    return self.decode(self.encode("A\u00c4")) == "a\u00e4"

  def encode(self, text):
    """str -> list of ids, without EOS."""
    return self._sp.encode(text)

  def encode_inside(self, text):
    """str -> ids of ``text`` as it is spelled inside a line: no word
    start added before it (``encode`` adds one, as at a line's start);
    a space or U+2581 marks one. How another vocabulary's piece ("ing",
    "\u2581dog") is spelled in this one."""
    if self._inside is None:
      import sentencepiece
      from sentencepiece import sentencepiece_model_pb2
      model = sentencepiece_model_pb2.ModelProto()
      model.ParseFromString(self.model_proto)
      model.normalizer_spec.add_dummy_prefix = False
      self._inside = sentencepiece.SentencePieceProcessor(
          model_proto=model.SerializeToString())
    return self._inside.encode(text.replace("\u2581", " "))

  def encode_sampled(self, text, dropout):
    """str -> ids of one random segmentation, without EOS: each BPE merge
    skipped with probability ``dropout`` (BPE-dropout, SentencePiece's
    sampling; after ``seed_sampling`` the draws repeat within this process,
    not across processes)."""
    return self._sp.encode(text, enable_sampling=True, alpha=dropout,
                           nbest_size=-1)

  @staticmethod
  def seed_sampling(seed):
    """Seeds SentencePiece's sampling (one generator per process)."""
    import sentencepiece
    sentencepiece.set_random_generator_seed(int(seed))

  def decode(self, ids):
    """Ids -> str; stops at the first EOS and ignores padding."""
    ids = list(ids)
    if EOS_ID in ids:
      ids = ids[:ids.index(EOS_ID)]
    return self._sp.decode([i for i in ids if i != PAD_ID])

  def all_pieces(self):
    """Every id's piece as a string, in id order (word-initial pieces begin
    with U+2581)."""
    return [self._sp.id_to_piece(i) for i in range(self.size)]

  def word_starts(self):
    """Per id, whether its piece begins a word (U+2581 first): what may
    follow a whole-word target prefix."""
    return [piece.startswith("\u2581") for piece in self.all_pieces()]

  def pieces(self, ids):
    """Ids -> their pieces as strings (EOS is "</s>"), for display."""
    return [self._sp.id_to_piece(int(i)) for i in ids]

  # -- TensorFlow graph -----------------------------------------------------
  @property
  def tf_tokenizer(self):
    """A tensorflow_text.SentencepieceTokenizer for this model."""
    if self._tf_tokenizer is None:
      import tensorflow as tf
      import tensorflow_text
      with native_stderr_silenced():   # SentencePiece's normalizer note
        self._tf_tokenizer = tensorflow_text.SentencepieceTokenizer(
            model=self.model_proto, out_type=tf.int32)
    return self._tf_tokenizer

  def tf_encode(self, strings):
    """tf.string [batch] -> int32 RaggedTensor [batch, None], without EOS."""
    return self.tf_tokenizer.tokenize(strings)

  def tf_decode(self, ids):
    """int [batch, length] (dense, 0-padded, EOS-terminated, or ragged) ->
    tf.string [batch]."""
    import tensorflow as tf
    if not isinstance(ids, tf.RaggedTensor):
      ids = tf.convert_to_tensor(ids)
      is_eos = tf.cast(tf.equal(ids, EOS_ID), tf.int32)
      before_eos = tf.equal(tf.cumsum(is_eos, axis=1), 0)
      keep = tf.logical_and(before_eos, tf.not_equal(ids, PAD_ID))
      ids = tf.ragged.boolean_mask(ids, keep)
    return self.tf_tokenizer.detokenize(tf.cast(ids, tf.int32))


def _named_lowercase(proto):
  """The model ``proto`` with its rules named "lowercase" instead of the
  path of the temporary rule file, so that the same texts still give the
  same model, byte for byte."""
  from sentencepiece import sentencepiece_model_pb2
  model = sentencepiece_model_pb2.ModelProto()
  model.ParseFromString(proto)
  model.normalizer_spec.name = "lowercase"
  model.normalizer_spec.normalization_rule_tsv = ""
  return model.SerializeToString()


def _write_lowercase_rules(path):
  """Writes SentencePiece normalization rules (hex code points, tab, hex code
  points) mapping each character that ``str.lower`` changes to its lowercase
  form; every other character stays as it is."""
  rows = []
  for code in range(0x110000):
    if 0xD800 <= code < 0xE000:   # surrogates are not characters
      continue
    char = chr(code)
    lower = char.lower()
    if lower != char:
      rows.append(f"{code:X}\t" + " ".join(f"{ord(c):X}" for c in lower))
  files.write_text(path, "\n".join(rows) + "\n")
