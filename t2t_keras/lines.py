"""Text lines as every command reads and writes them, whatever the bytes.

A line ends at "\\n" and nowhere else: one trailing "\\r" (a CRLF file) is
removed, and CR, VT, FF, U+2028, NUL and every other character inside a line
stay in it, so line i of the output always answers line i of the input.
Bytes that are not UTF-8 are read as U+FFFD (the decoder) or refused with
the file and line number (the scorers, whose numbers would otherwise be
silently wrong). Output lines never contain "\\n" or "\\r".
"""

from t2t_keras.errors import UserError


# UTF-8's byte order mark, which editors on Windows put at a file's start
# (and concatenation inside it): stripped wherever a line begins with it.
BOM = b"\xef\xbb\xbf"


class LineReader:
  """Iterates over the lines of a binary stream as str.

  Args:
    stream: a binary file object (``open(path, "rb")``, ``sys.stdin.buffer``).
    name: how messages name the stream (a path, or "stdin").
    strict: raise ``UserError`` at the first line that is not UTF-8,
      instead of replacing its bad bytes with U+FFFD.
  A byte order mark that begins a line is dropped.

  After (or during) iteration, ``lines`` is the number read, ``bad_lines``
  the number with invalid UTF-8 and ``first_bad`` the first such line's
  number (1-based), or None.
  """

  def __init__(self, stream, name, strict=False):
    self.stream, self.name, self.strict = stream, name, strict
    self.lines = self.bad_lines = 0
    self.first_bad = None

  def __iter__(self):
    for raw in self.stream:          # binary streams split on b"\n" only
      self.lines += 1
      if raw.endswith(b"\n"):
        raw = raw[:-1]
      if raw.endswith(b"\r"):
        raw = raw[:-1]
      if raw.startswith(BOM):     # a byte order mark is not text
        raw = raw[len(BOM):]
      try:
        yield raw.decode("utf-8")
      except UnicodeDecodeError as e:
        if self.strict:
          raise UserError(
              f"{self.name} line {self.lines}: byte 0x{raw[e.start]:02x} at "
              f"byte {e.start + 1} is not UTF-8; expected UTF-8 text") from None
        self.bad_lines += 1
        self.first_bad = self.first_bad or self.lines
        yield raw.decode("utf-8", errors="replace")

  def report(self):
    """One line about invalid UTF-8, or None when there was none."""
    if not self.bad_lines:
      return None
    return (f"{self.bad_lines} line(s) of {self.name} held bytes that are not "
            f"UTF-8, read as U+FFFD (first: line {self.first_bad})")


def read_lines(path, strict=True):
  """All lines of the file at ``path`` (see ``LineReader``)."""
  with open(path, "rb") as f:
    return list(LineReader(f, path, strict=strict))


def one_line(text):
  """``text`` made safe as one output line: "\\r\\n", "\\n" and "\\r"
  become spaces."""
  return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
