"""Progress lines for the t2t-* commands."""

import contextlib
import os
import re
import sys
import tempfile


def log_line(message):
  """Prints one progress line and flushes it at once, so that it shows up
  when output goes to a file or a pipe."""
  print(message, file=sys.stdout, flush=True)


@contextlib.contextmanager
def _stderr_to(fd):
  """Points the process's file descriptor 2 at ``fd`` for the block."""
  sys.stderr.flush()
  saved = os.dup(2)
  os.dup2(fd, 2)
  try:
    yield
  finally:
    sys.stderr.flush()
    os.dup2(saved, 2)
    os.close(saved)


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
  devnull = os.open(os.devnull, os.O_WRONLY)
  try:
    with _stderr_to(devnull):
      yield
  finally:
    os.close(devnull)


# What C++ libraries printed while ``native_stderr_kept`` held it back (the
# TensorFlow import's start-up lines), one string a line.
KEPT_LINES = []


@contextlib.contextmanager
def native_stderr_kept():
  """Like ``native_stderr_silenced``, but keeps what was printed in
  KEPT_LINES, so that a later error can quote it (a GPU that TensorFlow
  could not open says why at start-up: ``native_errors``)."""
  if os.environ.get("T2T_NATIVE_LOGS"):
    yield
    return
  with tempfile.TemporaryFile() as kept:
    try:
      with _stderr_to(kept.fileno()):
        yield
    finally:
      kept.seek(0)
      KEPT_LINES.extend(kept.read().decode("utf-8", "replace").splitlines())


# C++ lines that say nothing a user can act on, dropped by
# ``native_stderr_filtered``: oneDNN's graph rewrite logs this error-level
# line on the first run of an exported graph, on CPUs that have AVX-512 too.
KNOWN_NOISE = (re.compile(r"oneDNN supports DT_INT64 only"),)


@contextlib.contextmanager
def native_stderr_filtered(noise=KNOWN_NOISE):
  """Holds back what C++ libraries print in the block, then prints it to
  standard error less the lines matching ``noise``."""
  if os.environ.get("T2T_NATIVE_LOGS"):
    yield
    return
  before = len(KEPT_LINES)
  try:
    with native_stderr_kept():
      yield
  finally:
    shown = [line for line in KEPT_LINES[before:]
             if not any(n.search(line) for n in noise)]
    del KEPT_LINES[before:]
    if shown:
      print("\n".join(shown), file=sys.stderr, flush=True)


def native_errors():
  """The error lines (glog's ``E`` lines) among KEPT_LINES, without their
  time and source prefix: e.g. "failed call to cuInit: ..."."""
  return [line.split("] ", 1)[-1] for line in KEPT_LINES
          if re.match(r"E\d{4} ", line)]
