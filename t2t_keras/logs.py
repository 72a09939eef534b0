"""Progress lines for the t2t-* commands."""

import contextlib
import os
import sys


def log_line(message):
  """Prints one progress line and flushes it at once, so that it shows up
  when output goes to a file or a pipe."""
  print(message, file=sys.stdout, flush=True)


@contextlib.contextmanager
def native_stderr_silenced(enabled=True):
  """Sends the process's file descriptor 2 to /dev/null for the block, so
  that lines C++ libraries print there (TensorFlow's start-up lines,
  SentencePiece's "precompiled_charsmap is empty" note) do not reach the
  console. Python exceptions raised in the block still propagate and are
  shown after it."""
  if not enabled or os.environ.get("T2T_NATIVE_LOGS"):
    yield
    return
  sys.stderr.flush()
  saved = os.dup(2)
  devnull = os.open(os.devnull, os.O_WRONLY)
  os.dup2(devnull, 2)
  try:
    yield
  finally:
    sys.stderr.flush()
    os.dup2(saved, 2)
    os.close(saved)
    os.close(devnull)
