"""Decoding a stream of lines through any backend (``backend.Backend``):
what t2t-decoder runs.

Input is read a window of lines at a time (``t2t_keras.io.lines``: lines end at
"\n" only, bad UTF-8 becomes U+FFFD), a shorter one where a pipe or
terminal pauses (``LineReader.ready``); inside a window the backend sorts
sentences by length, decodes them in batches, and the outputs are written
back in their original order as soon as the window is done. Every input line
gives exactly one output line, whatever its bytes: an empty line decodes
from EOS alone, a line longer than ``max_input_length`` tokens is cut to
that length (and counted), and no output line contains a line break.
"""

import itertools
import time

from t2t_keras.decode_defaults import DEFAULT_WINDOW
from t2t_keras.decoding.batching import windows
from t2t_keras.errors import UserError
from t2t_keras.io.lines import one_line
from t2t_keras.io.logs import log_line


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
                  aligner=None, alignments=None, after_window=None):
  """Decodes the lines of ``reader`` (a ``lines.LineReader``) into the
  binary stream ``target``, ``window`` lines at a time; ``prefixes``, a
  LineReader of one target prefix per input line ("" for none), forces
  each output's beginning. With an ``aligner`` (``alignments.Aligner``),
  each output's word alignment is written to the binary stream
  ``alignments``, one line per input line. ``after_window(n)`` is called
  once a window of ``n`` lines is written and flushed (``io.resume``
  records it).

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

  # A window also ends where the input pauses (a pipe or terminal with
  # nothing more to read yet): a program that writes a line and waits for
  # its answer gets it, with stdin still open.
  for lines in windows(reader, window, getattr(reader, "ready", None)):
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
    if after_window is not None:
      after_window(len(outputs))
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
