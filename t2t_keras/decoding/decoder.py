"""Decoding text with a trained model: what t2t-decoder runs.

Sentences are sorted by length, decoded in batches, and written back in
their original order; every input line gives exactly one output line (an
empty line decodes from EOS alone; a line longer than ``max_input_length``
tokens is cut to that length, and counted).
"""

import dataclasses
import time

import tensorflow as tf

from t2t_keras.decoding.beam_search import search_function
from t2t_keras.hparams import HParams
from t2t_keras.ids import EOS_ID
from t2t_keras.logs import log_line


def decode_hparams(overrides="", defaults=None):
  """The paper's decoding settings (section 6.1), then a problem's
  ``defaults`` (parsing: beam 21, alpha 0.3, extra 300), then overrides."""
  hparams = HParams(beam_size=4, alpha=0.6, extra_length=50, batch_size=32,
                    max_input_length=512, return_beams=False)
  hparams.override_from_dict(defaults or {})
  return hparams.parse(overrides)


@dataclasses.dataclass
class DecodeStats:
  sentences: int = 0
  target_tokens: int = 0
  truncated: int = 0
  seconds: float = 0.0


class Decoder:
  """Decodes strings with ``model`` under ``hparams`` (from
  ``decode_hparams``). One traced tf.function serves every batch shape.

  Args:
    model: a ``models.base.Seq2SeqModel``.
    vocab: encodes the source lines (and decodes the outputs unless
      ``target_vocab`` is given).
    hparams: from ``decode_hparams``.
    postprocess: ``(text, source) -> line`` (a problem's ``postprocess``).
    target_vocab: decodes the outputs when the two sides differ.
  """

  def __init__(self, model, vocab, hparams, postprocess=None,
               target_vocab=None):
    self.model, self.vocab, self.hparams = model, vocab, hparams
    self.target_vocab = target_vocab or vocab
    self.postprocess = postprocess
    self._search = tf.function(
        search_function(model, hparams.beam_size, hparams.alpha,
                        hparams.extra_length),
        input_signature=[tf.TensorSpec([None, None], tf.int32)])
    self.stats = DecodeStats()

  def _encode(self, line):
    ids = self.vocab.encode(line)
    limit = self.hparams.max_input_length - 1
    if len(ids) > limit:
      ids = ids[:limit]
      self.stats.truncated += 1
    return ids + [EOS_ID]

  def decode(self, lines, progress=None):
    """Decoded strings, one per line (with n-best lists, a list per line of
    (string, score) pairs when return_beams)."""
    start = time.time()
    encoded = [self._encode(line) for line in lines]
    order = sorted(range(len(lines)), key=lambda i: len(encoded[i]))
    results = [None] * len(lines)
    size = self.hparams.batch_size
    for first in range(0, len(order), size):
      chunk = order[first:first + size]
      longest = max(len(encoded[i]) for i in chunk)
      batch = [encoded[i] + [0] * (longest - len(encoded[i])) for i in chunk]
      ids, scores = self._search(tf.constant(batch, tf.int32))
      ids, scores = ids.numpy(), scores.numpy()
      for row, index in enumerate(chunk):
        beams = [self._text(ids[row, k], lines[index])
                 for k in range(ids.shape[1])]
        results[index] = (list(zip(beams, scores[row].tolist()))
                          if self.hparams.return_beams else beams[0])
        self.stats.target_tokens += int((ids[row, 0] != 0).sum())
      self.stats.sentences += len(chunk)
      if progress:
        progress(self.stats.sentences, len(lines), time.time() - start)
    self.stats.seconds += time.time() - start
    return results

  def _text(self, ids, source):
    text = self.target_vocab.decode(ids)
    return self.postprocess(text, source) if self.postprocess else text


def decode_file(decoder, source, target, log=log_line):
  """Decodes the lines of file object ``source`` into ``target``."""
  lines = [line.rstrip("\n").rstrip("\r") for line in source]

  def progress(done, total, seconds):
    log(f"decoded {done}/{total} sentences, {done / max(seconds, 1e-9):.1f} "
        "sentences/s")

  outputs = decoder.decode(lines, progress=progress)
  for output in outputs:
    if isinstance(output, list):
      output = "\t".join(f"{text}\t{score:.4f}" for text, score in output)
    target.write(output.replace("\n", " ") + "\n")
  target.flush()
  if decoder.stats.truncated:
    log(f"{decoder.stats.truncated} line(s) longer than "
        f"{decoder.hparams.max_input_length} tokens were cut to that length")
  return len(outputs)
