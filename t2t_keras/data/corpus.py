"""Reading users' raw text: line-aligned parallel files, one sentence a line.

Bad input never ends in a traceback. A missing file or parallel files of
different lengths stop with an error naming the files. Lines that cannot be
used (invalid UTF-8, empty on either side) are skipped and counted, and the
counts are logged. Long lines are kept; training drops examples over
``max_length`` tokens later, and that is counted too.
"""

import collections
import os

from t2t_keras.errors import UserError


class CorpusError(UserError):
  """Raised for unusable input files; the message names them."""


class SkipCounter(collections.Counter):
  """Counts skipped lines by reason, and remembers where each reason first
  happened."""

  def __init__(self):
    super().__init__()
    self.first = {}

  def skip(self, reason, where):
    self[reason] += 1
    self.first.setdefault(reason, where)

  def summary(self):
    if not self:
      return "no lines skipped"
    return "; ".join(f"skipped {n} pair(s): {reason} (first at {self.first[reason]})"
                     for reason, n in sorted(self.items()))


def check_file(path, flag_hint=""):
  if not os.path.isfile(path):
    hint = f" ({flag_hint})" if flag_hint else ""
    raise CorpusError(f"missing input file {path}{hint}")
  return path


def count_lines(path):
  with open(path, "rb") as f:
    return sum(1 for _ in f)


def _decode(raw):
  """A line of bytes -> str without the line break, a byte order mark and
  surrounding spaces, or None if it is not UTF-8."""
  try:
    return raw.decode("utf-8").rstrip("\r\n").lstrip("\ufeff").strip()
  except UnicodeDecodeError:
    return None


def read_parallel(source_path, target_path, skipped=None):
  """Yields (source, target) str pairs from two line-aligned files.

  Args:
    source_path, target_path: UTF-8 text, one sentence a line.
    skipped: a SkipCounter that collects the skipped pairs.
  Raises:
    CorpusError: a file is missing or the files have different lengths.
  """
  check_file(source_path)
  check_file(target_path)
  n_source, n_target = count_lines(source_path), count_lines(target_path)
  if n_source != n_target:
    raise CorpusError(
        f"parallel files differ in length: {source_path} has {n_source} "
        f"lines, {target_path} has {n_target}")
  skipped = skipped if skipped is not None else SkipCounter()
  name = os.path.basename(source_path)
  with open(source_path, "rb") as fs, open(target_path, "rb") as ft:
    for number, (raw_source, raw_target) in enumerate(zip(fs, ft), 1):
      source, target = _decode(raw_source), _decode(raw_target)
      if source is None or target is None:
        skipped.skip("invalid UTF-8", f"{name} line {number}")
      elif not source or not target:
        skipped.skip("empty line", f"{name} line {number}")
      else:
        yield source, target


def sample_lines(path, byte_budget):
  """About ``byte_budget`` bytes of a file's lines, spread evenly over it.

  Deterministic: every k-th line, with k = file size / budget, so the same
  file and budget always give the same sample. Lines that are not UTF-8 are
  left out. A budget of 0 or less takes the whole file.
  """
  check_file(path)
  size = os.path.getsize(path)
  stride = max(1, -(-size // byte_budget)) if byte_budget > 0 else 1
  with open(path, "rb") as f:
    for number, raw in enumerate(f):
      if number % stride == 0:
        line = _decode(raw)
        if line:
          yield line
