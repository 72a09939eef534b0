"""Outputs of a long run over an input file that a rerun goes on with.

A decode of a corpus (back-translation: hours) killed midway should not
start over. ``resumable(paths, key)`` writes each output under a hidden
name beside it, ``.NAME.resume``, and after every window of lines records
in ``.NAME.resume.json`` (by one rename) how many lines are done and how
many bytes each output holds then. The same command run again (the same
``key``: the input's digest and every setting that shapes the output)
cuts each hidden file back to its recorded size (a window a kill cut in
half goes), skips the lines done and appends; when the input ends, each
hidden file is renamed to its own name. Another key starts over.

The recorded lines are whole windows, so the windows after a resume are
those an uninterrupted run makes, and the outputs are byte-identical.
"""

import contextlib
import hashlib
import json
import os
import stat

from t2t_keras.errors import Interrupted
from t2t_keras.io import files
from t2t_keras.io.outputs import locked, write_failed

RECORD = ".resume.json"


def digest_file(path, chunk=1 << 20):
  """The SHA-256 of the file at ``path``, in hex."""
  h = hashlib.sha256()
  with open(path, "rb") as f:
    while block := f.read(chunk):
      h.update(block)
  return h.hexdigest()


def hidden(path):
  folder, name = os.path.split(os.path.abspath(path))
  return os.path.join(folder, f".{name}.resume")


class Resumable:
  """The outputs of one run: ``streams`` (binary, appending), ``done``
  (input lines an earlier run finished, to skip)."""

  def __init__(self, paths, key):
    self.paths = [os.path.realpath(p) if os.path.islink(p) else p
                  for p in paths]
    self.key = key
    self.record = hidden(self.paths[0]) + ".json"
    self.done, self.streams = 0, []

  def _recorded(self):
    """The earlier run's record if it is this run's and its files are
    there, else None."""
    try:
      with open(self.record, encoding="utf-8") as f:
        record = json.load(f)
      if record.get("key") != self.key or len(record["bytes"]) != len(
          self.paths):
        return None
      for path, size in zip(self.paths, record["bytes"]):
        if os.path.getsize(hidden(path)) < size:
          return None
      return record
    except (OSError, ValueError, KeyError, TypeError):
      return None

  def open(self):
    record = self._recorded()
    if record is None:
      self.discard()
      record = {"key": self.key, "lines": 0, "bytes": [0] * len(self.paths)}
    self.done = record["lines"]
    self.bytes = list(record["bytes"])
    for path, size in zip(self.paths, self.bytes):
      f = open(hidden(path), "r+b" if size else "wb")
      f.truncate(size)
      f.seek(size)
      self.streams.append(f)
    self._write_record()
    return self

  def _write_record(self):
    files.write_text(self.record, json.dumps(
        {"key": self.key, "lines": self.done, "bytes": self.bytes}))

  def window_done(self, lines):
    """After a window of ``lines`` input lines is written to every
    stream: flushed, then recorded."""
    for f in self.streams:
      f.flush()
      os.fsync(f.fileno())
    self.done += lines
    self.bytes = [f.tell() for f in self.streams]
    self._write_record()

  def finish(self):
    for f in self.streams:
      f.close()
    for path in self.paths:
      files.replace(hidden(path), path)
    files.remove(self.record)

  def close(self):
    for f in self.streams:
      f.close()

  def discard(self):
    for path in self.paths:
      files.remove(hidden(path))
    files.remove(self.record)


@contextlib.contextmanager
def resumable(paths, key):
  """A ``Resumable`` over ``paths`` for the run ``key`` (a string), each
  path locked against a second command. When the block ends cleanly the
  outputs take their names; when it is stopped (a signal, Ctrl-C) or a
  write fails (a full disk) what is done stays hidden for the rerun; any
  other exception discards it (a rerun starts over)."""
  with contextlib.ExitStack() as stack:
    for path in paths:
      stack.enter_context(locked(path))
    run = Resumable(paths, key)
    try:
      yield run.open()
    except OSError as e:
      run.close()
      if e.filename not in (None,) + tuple(hidden(p) for p in run.paths):
        raise
      raise write_failed(paths[0], e) from None
    except (Interrupted, KeyboardInterrupt):
      run.close()
      raise
    except BaseException:
      run.close()
      run.discard()
      raise
    run.finish()


def run_key(settings, inputs=(), models=()):
  """The key of a run: ``settings`` (a dict of what shapes the output,
  as JSON), the SHA-256 of each file of ``inputs`` and the identity of
  each model file or folder of ``models`` (a checkpoint folder's state
  file, a checkpoint's index, a SavedModel's graph: their paths, sizes
  and times of change), so that a rerun with anything changed starts
  over."""
  h = hashlib.sha256(json.dumps(settings, sort_keys=True,
                                default=str).encode("utf-8"))
  for path in inputs:
    if path:
      h.update(digest_file(path).encode("ascii"))
  for path in models:
    if not path:
      continue
    for name in ("checkpoint", "saved_model.pb", "model.bin", ""):
      target = os.path.join(path, name) if name else path
      for candidate in (target, target + ".index"):
        if os.path.isfile(candidate):
          st = os.stat(candidate)
          h.update(f"{candidate}:{st.st_size}:{st.st_mtime_ns}".encode())
          with open(candidate, "rb") as f:
            h.update(hashlib.sha256(f.read(1 << 20)).digest())
  return h.hexdigest()


def can_resume(source_path, output_path):
  """Whether a run from ``source_path`` into ``output_path`` can go on
  after a stop: the source is a regular file (a pipe's lines cannot be
  read again) and the output a regular file or a new name."""
  if not source_path or not output_path or files.special(output_path):
    return False
  try:
    return stat.S_ISREG(os.stat(source_path).st_mode)
  except OSError:
    return False
