"""Text lines as every command reads and writes them, whatever the bytes.

A line ends at "\\n" and nowhere else: one trailing "\\r" (a CRLF file) is
removed, and CR, VT, FF, U+2028, NUL and every other character inside a line
stay in it, so line i of the output always answers line i of the input.
Bytes that are not UTF-8 are read as U+FFFD (the decoder) or refused with
the file and line number (the scorers, whose numbers would otherwise be
silently wrong). Output lines never contain "\\n" or "\\r".
"""

import os
import select
import stat

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
  A byte order mark that begins a line is dropped. A pipe, terminal or
  socket is read by the reader itself, so that ``ready`` can tell whether
  the next line waits.

  After (or during) iteration, ``lines`` is the number read, ``bad_lines``
  the number with invalid UTF-8 and ``first_bad`` the first such line's
  number (1-based), or None.
  """

  def __init__(self, stream, name, strict=False):
    self.stream, self.name, self.strict = stream, name, strict
    self.lines = self.bad_lines = 0
    self.first_bad = None
    self._live = _live_descriptor(stream)
    self._buffer, self._start, self._searched = bytearray(), 0, 0
    self._ended = False

  def ready(self):
    """Whether the next line can be had without waiting: always for a file;
    for a pipe, terminal or socket, when a whole line (or the end) is
    already read or more bytes are waiting. A reader of windows of lines
    closes one early when not (``decoding.batching.windows``), so a
    program that writes a line and waits gets its answer."""
    if self._live is None or self._ended or self._newline() >= 0:
      return True
    return bool(select.select([self._live], [], [], 0)[0])

  def _newline(self):
    """The index of the first b"\n" in the buffer from ``_start``, or -1;
    the bytes searched in vain are not searched again (a long line comes
    in many reads)."""
    end = self._buffer.find(b"\n", max(self._start, self._searched))
    self._searched = len(self._buffer) if end < 0 else end
    return end

  def _raw_lines(self):
    """The stream's lines as bytes, each with its b"\n" (not the last, if
    the stream does not end with one); a live stream is read by
    ``os.read`` into this reader's own buffer, so ``ready`` sees it."""
    if self._live is None:
      # Binary streams split on b"\n" only. Not ``yield from``: a reader
      # left half-read (lines skipped on a resume) would close the stream.
      for line in self.stream:
        yield line
      return
    while True:
      end = self._newline()
      if end >= 0:
        line, self._start = bytes(self._buffer[self._start:end + 1]), end + 1
        yield line
      elif self._ended:
        line, self._start = bytes(self._buffer[self._start:]), len(self._buffer)
        if line:
          yield line
        return
      else:
        del self._buffer[:self._start]
        self._searched -= self._start
        self._start = 0
        chunk = os.read(self._live, 1 << 16)
        self._buffer += chunk
        self._ended = not chunk

  def __iter__(self):
    for raw in self._raw_lines():
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


def _live_descriptor(stream):
  """The file descriptor of ``stream`` where it is a pipe, terminal or
  socket (input that may pause), then read by ``LineReader`` itself (past
  any buffer of ``stream``: nothing may have read from it before); None
  for a regular file or a stream without one (``io.BytesIO``)."""
  if os.name == "nt":   # select() takes only sockets there
    return None
  try:
    descriptor = stream.fileno()
    mode = os.fstat(descriptor).st_mode
  except (AttributeError, OSError, ValueError):
    return None
  if stat.S_ISREG(mode) or stat.S_ISBLK(mode):
    return None
  return descriptor


def read_lines(path, strict=True):
  """All lines of the file at ``path`` (see ``LineReader``)."""
  with open(path, "rb") as f:
    return list(LineReader(f, path, strict=strict))


def one_line(text):
  """``text`` made safe as one output line: "\\r\\n", "\\n" and "\\r"
  become spaces."""
  return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
