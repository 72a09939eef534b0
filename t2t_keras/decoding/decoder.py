"""Decoding text with a trained model: what t2t-decoder runs.

Input is read a window of lines at a time (``t2t_keras.lines``: lines end at
"\n" only, bad UTF-8 becomes U+FFFD); inside a window sentences are sorted
by length, decoded in batches, and written back in their original order as
soon as the window is done. Every input line gives exactly one output line,
whatever its bytes: an empty line decodes from EOS alone, a line longer than
``max_input_length`` tokens is cut to that length (and counted), and no
output line contains a line break.
"""

import dataclasses
import itertools
import re
import time

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.decoding.constraints import PrefixConstraint
from t2t_keras.decoding.search import make_search, search_function
from t2t_keras.decoding.steps import ALPHA, BEAM_SIZE, EXTRA_LENGTH
from t2t_keras.errors import UserError
from t2t_keras.hparams import HParams
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.lines import one_line
from t2t_keras.logs import log_line

# Lines read and decoded before their outputs are written (t2t-decoder's
# --window_lines): memory is bounded by the window, not by the file.
DEFAULT_WINDOW = 1000
BATCH_SIZE = 32         # sentences per search call


def decode_hparams(overrides="", defaults=None):
  """The paper's decoding settings (section 6.1), then a problem's
  ``defaults`` (parsing: beam 21, alpha 0.3, extra 300), then overrides.
  ``search`` names a registered search (``decoding.search``; empty: beam,
  greedy for beam_size=1, sampling when ``sampling=topk|topp``, with
  ``top_k``, ``top_p``, ``temperature``, ``seed``, draws one output per
  sentence). A search's own settings (its class's ``settings``) are added
  before the overrides apply."""
  hparams = HParams(search="", beam_size=BEAM_SIZE, alpha=ALPHA,
                    extra_length=EXTRA_LENGTH, batch_size=BATCH_SIZE,
                    max_input_length=512, return_beams=False, sampling="",
                    top_k=0, top_p=1.0, temperature=1.0, seed=0)
  hparams.override_from_dict(defaults or {})
  named = re.search(r"(?:^|,)\s*search\s*=\s*([^,]*)", overrides or "")
  name = named.group(1).strip() if named else hparams.search
  if name:
    for key, value in registry.lookup("search", name).settings.items():
      if key not in hparams:
        hparams.add_hparam(key, value)
  hparams.parse(overrides)
  search = make_search(hparams)      # checks the search's own settings
  if hparams.return_beams and not search.nbest:
    raise UserError(f"return_beams goes with beam search, not "
                    f"{search.registered_name}")
  return hparams


def with_eos(ids, max_length):
  """(``ids`` cut to ``max_length - 1`` tokens, then EOS; whether a cut was
  made)."""
  return ids[:max_length - 1] + [EOS_ID], len(ids) > max_length - 1


def encode_with_eos(vocab, text, max_length):
  """``with_eos`` of the ids of ``text``."""
  return with_eos(vocab.encode(text), max_length)


def length_sorted_chunks(lengths, batch_size):
  """Indices of ``lengths`` in order of length, in chunks of
  ``batch_size``: batches of similar lengths waste little on padding."""
  order = sorted(range(len(lengths)), key=lengths.__getitem__)
  return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def padded(rows):
  """Lists of ids -> int32 [len(rows), longest], 0-padded."""
  longest = max(len(r) for r in rows)
  return tf.constant([r + [PAD_ID] * (longest - len(r)) for r in rows],
                     tf.int32)


def windows(items, size):
  """Lists of up to ``size`` consecutive items of the iterable ``items``."""
  items = iter(items)
  return iter(lambda: list(itertools.islice(items, size)), [])


def describe(hparams):
  """How decode ``hparams`` pick outputs, for log lines."""
  return make_search(hparams).describe()


def describe_precision(model):
  """What ``model`` computes in, for log lines: "float32", or e.g.
  "bfloat16 (float32 weights)"."""
  compute = str(model.compute_dtype)
  return compute if compute == model.variable_dtype else (
      f"{compute} ({model.variable_dtype} weights)")


@dataclasses.dataclass
class DecodeStats:
  sentences: int = 0
  target_tokens: int = 0
  truncated: int = 0
  repaired: int = 0
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
    constraint: a ``decoding.constraints.Constraint`` every search applies
      (a problem's ``decode_constraint``), or None.
    repaired: ``(text, source) -> bool``, whether ``postprocess`` repaired
      an output (counted in ``stats.repaired``).
  """

  def __init__(self, model, vocab, hparams, postprocess=None,
               target_vocab=None, constraint=None, repaired=None):
    self.model, self.vocab, self.hparams = model, vocab, hparams
    self.target_vocab = target_vocab or vocab
    self.postprocess, self.repaired = postprocess, repaired
    self.constraint = constraint
    search = search_function(model, hparams)
    ids = tf.TensorSpec([None, None], tf.int32)
    self._search = tf.function(lambda inputs: search(inputs, constraint),
                               input_signature=[ids])
    self._search_prefixed = tf.function(
        lambda inputs, prefixes: search(inputs, PrefixConstraint(prefixes)),
        input_signature=[ids, ids])
    self.stats = DecodeStats()

  def encode(self, line):
    """Source ids of ``line``, cut to ``max_input_length`` (counted)."""
    ids, cut = encode_with_eos(self.vocab, line,
                               self.hparams.max_input_length)
    self.stats.truncated += cut
    return ids

  def search(self, batch, prefixes=None):
    """int32 [batch, length] source ids (and int32 [batch, prefix_length]
    0-padded target prefixes) -> numpy (ids [batch, beams, length], scores
    [batch, beams])."""
    if prefixes is None:
      ids, scores = self._search(batch)
    else:
      ids, scores = self._search_prefixed(batch, prefixes)
    return ids.numpy(), scores.numpy()

  def decode(self, lines, progress=None, prefixes=None):
    """Decoded strings, one per line (with return_beams, a list per line of
    the (string, score) pairs the search finished, best first).

    ``prefixes``: optional target prefixes (str, "" for none), one per line:
    each output begins with its prefix (``constraints.PrefixConstraint``).
    ``progress(sentences)`` is called after each batch with the number of
    sentences this decoder has done in all."""
    if prefixes is not None and self.constraint is not None:
      raise UserError("target prefixes cannot be combined with this "
                      "problem's decoding constraint")
    encoded_prefixes = None if prefixes is None else [
        self.target_vocab.encode(p)[:self.hparams.max_input_length]
        for p in prefixes]
    return self.decode_ids([self.encode(line) for line in lines], lines,
                           progress, encoded_prefixes)

  def decode_ids(self, encoded, sources, progress=None, prefixes=None):
    """``decode`` of sentences already encoded (lists of ids ending in
    EOS); ``sources`` are their texts, for ``postprocess``; ``prefixes``
    lists of target ids (no EOS), or None."""
    start = time.time()
    results = [None] * len(encoded)
    for chunk in length_sorted_chunks([len(e) for e in encoded],
                                      self.hparams.batch_size):
      ids, scores = self.search(
          padded([encoded[i] for i in chunk]),
          None if prefixes is None else padded([prefixes[i] for i in chunk]))
      for row, index in enumerate(chunk):
        if self.hparams.return_beams:   # real hypotheses only, never filler
          results[index] = [
              (self._text(ids[row, k], sources[index]), float(scores[row, k]))
              for k in range(ids.shape[1]) if scores[row, k] > NEG_INF / 2]
        else:
          results[index] = self._text(ids[row, 0], sources[index])
        self.stats.target_tokens += int((ids[row, 0] != PAD_ID).sum())
      self.stats.sentences += len(chunk)
      if progress:
        progress(self.stats.sentences)
    self.stats.seconds += time.time() - start
    return results

  def _text(self, ids, source):
    text = self.target_vocab.decode(ids)
    if self.repaired and self.repaired(text, source):
      self.stats.repaired += 1
    return self.postprocess(text, source) if self.postprocess else text


def format_pairs(pairs):
  """Pharaoh alignment pairs [(i, j)] -> "i-j i-j ..."."""
  return " ".join(f"{i}-{j}" for i, j in pairs)


def format_output(output):
  """One output line (without its "\n"): the text, or for an n-best list
  ``text<TAB>score`` pairs joined by tabs."""
  if isinstance(output, list):
    return "\t".join(f"{one_line(text)}\t{score:.4f}"
                     for text, score in output)
  return one_line(output)


def decode_stream(decoder, reader, target, window=DEFAULT_WINDOW,
                  log=log_line, progress_seconds=3.0, prefixes=None,
                  aligner=None, alignments=None):
  """Decodes the lines of ``reader`` (a ``lines.LineReader``) into the
  binary stream ``target``, ``window`` lines at a time; ``prefixes``, a
  LineReader of one target prefix per input line ("" for none), forces
  each output's beginning. With an ``aligner`` (``alignments.Aligner``),
  each output's word alignment is written to the binary stream
  ``alignments``, one line per input line.

  Each window's outputs are written with one write and flushed, so a killed
  run leaves only complete lines. Progress goes to ``log`` at most every
  ``progress_seconds`` (after a batch). Returns the number of lines written.
  """
  start = last = time.time()
  written = 0

  def progress(sentences):
    nonlocal last
    now = time.time()
    if now - last >= progress_seconds:
      log(f"decoded {sentences:,} sentences, "
          f"{sentences / (now - start):.1f} sentences/s")
      last = now

  for lines in windows(reader, window):
    if prefixes is None:
      outputs = decoder.decode(lines, progress=progress)
    else:
      given = list(itertools.islice(prefixes, len(lines)))
      if len(given) < len(lines):
        raise UserError(f"{prefixes.name} ends after {prefixes.lines} "
                        f"line(s) but the input goes on: give one prefix "
                        "per input line (an empty line for none)")
      outputs = decoder.decode(lines, progress=progress, prefixes=given)
    target.write("".join(format_output(o) + "\n"
                         for o in outputs).encode("utf-8"))
    target.flush()
    if aligner is not None:
      alignments.write("".join(
          format_pairs(p) + "\n" for p in aligner.align(lines, outputs))
                       .encode("utf-8"))
      alignments.flush()
    written += len(outputs)
  seconds = time.time() - start
  log(f"decoded {written:,} line(s) in {seconds:.1f} s "
      f"({written / max(seconds, 1e-9):.1f} sentences/s)")
  if getattr(decoder, "repaired", None):
    log(f"repaired {decoder.stats.repaired} of {written}")
  if decoder.stats.truncated:
    log(f"{decoder.stats.truncated} line(s) longer than "
        f"{decoder.hparams.max_input_length} tokens were cut to that length")
  if reader.report():
    log(reader.report())
  return written
