"""Outputs that appear whole or not at all, and never over an input.

``output_file(path)`` writes to a hidden temporary name beside ``path``
(``.<name>.<pid>.partial``) and renames it to ``path`` only when the block
ends without an exception: a command that fails or is stopped halfway
leaves the file the user had before. While it writes, ``<path>.lock``
names its process, so that a second command writing the same file is
refused (a lock whose process is gone is taken over). ``output_dir(path)``
does the same for a directory (a SavedModel version), which must not exist.
``check_outputs`` refuses an output that is also an input. A special
file (a device such as /dev/null, a FIFO, a socket, /dev/stdout on a pipe
or terminal) is written into as a shell's ``>`` would, never replaced.
A temporary name left by a killed command is removed by the next command
that writes the same file.
"""

import contextlib
import errno
import glob
import os

from t2t_keras.errors import ExistingFileError, UserError
from t2t_keras.io import files


def alive(pid):
  """Whether process ``pid`` exists on this host."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:     # someone else's process: alive
    return True
  return True


def _same(a, b):
  """Whether two paths name one file (the same inode, or one real path)."""
  try:
    return os.path.samefile(a, b)
  except OSError:
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs, inputs):
  """``outputs`` and ``inputs``: {flag name: path or None}. Refuses, in one
  line, an output that is also an input or another output."""
  given = [(f, p) for f, p in outputs.items() if p]
  for i, (flag, path) in enumerate(given):
    for other, source in list(inputs.items()) + given[i + 1:]:
      if source and source != "-" and _same(path, source):
        kind = "input" if other in inputs else "output"
        raise UserError(f"--{flag}={path} is also the {kind} --{other}: "
                        f"writing it would wipe the {kind}; write elsewhere")


@contextlib.contextmanager
def locked(path):
  lock = path + ".lock"
  mine = str(os.getpid())
  for _ in range(2):
    try:
      fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
      try:
        with open(lock, encoding="utf-8") as f:
          holder = int(f.read().strip() or 0)
      except (OSError, ValueError):
        holder = 0
      if holder and holder != os.getpid() and alive(holder):
        raise UserError(f"{path} is being written by another command (pid "
                        f"{holder}, {lock}); wait for it, or write "
                        "elsewhere") from None
      with contextlib.suppress(FileNotFoundError):
        os.remove(lock)        # its writer is gone: take it over
      continue
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      f.write(mine)
    break
  else:
    raise UserError(f"could not lock {lock} for {path}")
  try:
    yield
  finally:
    with contextlib.suppress(OSError):
      os.remove(lock)


def _partial(path):
  folder, name = os.path.split(os.path.abspath(path))
  if not os.path.isdir(folder):
    raise UserError(f"cannot write {path}: the folder {folder} does not "
                    "exist")
  return os.path.join(folder, f".{name}.{os.getpid()}.partial")


def sweep_partials(path):
  """Removes the temporary names beside ``path`` that commands no longer
  running left (``.NAME.PID.partial``: a SIGKILL gives no time to)."""
  folder, name = os.path.split(os.path.abspath(path))
  for left in glob.glob(os.path.join(glob.escape(folder),
                                     f".{glob.escape(name)}.*.partial")):
    pid = left[:-len(".partial")].rsplit(".", 1)[-1]
    if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
      files.remove_tree(left)


@contextlib.contextmanager
def output_file(path, mode="wb", **options):
  """Yields a file object open on a temporary name beside ``path``
  (``open``'s ``mode`` and ``options``); renames it to ``path`` when the
  block ends cleanly, removes it otherwise. A ``path`` that is a symbolic
  link is written at its target (the link stays a link)."""
  if files.special(path):
    with _into_special(path, mode, **options) as f:
      yield f
    return
  if os.path.islink(path):
    path = os.path.realpath(path)
  partial = _partial(path)
  with locked(path):
    sweep_partials(path)
    f = open(partial, mode, **options)
    try:
      try:
        yield f
        f.close()
      except OSError as e:
        # Only a write's own failure (a full disk): a missing input or
        # another command's error inside the block is passed on as it is.
        if isinstance(e, UserError) or e.filename not in (None, partial):
          raise
        raise write_failed(path, e) from None
      os.replace(partial, path)
    finally:
      f.close()
      with contextlib.suppress(FileNotFoundError):
        os.remove(partial)


def write_failed(path, error, into=False):
  """The one-line ``UserError`` for ``error`` (an OSError) while writing
  ``path`` through a temporary name: what happened, and that ``path`` is
  as it was (``into``: a stream written into, of which that is not
  said)."""
  full = error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
  tail = "" if into else (f"; {path} is left as it was" if
                          os.path.exists(path) else "; nothing was written")
  return UserError(
      f"could not write {path}: {error.strerror or error}" +
      (" (the disk is full, or a file-size limit was reached)" if full else "")
      + tail)


STANDARD = {"/dev/stdout": 1, "/dev/stderr": 2, "/proc/self/fd/1": 1,
            "/proc/self/fd/2": 2}


@contextlib.contextmanager
def _into_special(path, mode, **options):
  """A special file written into: the command's own standard output or
  error where ``path`` names it (a pipe reopened by name would be another
  reader's), else ``path`` opened as it is; a write that fails (a full
  device, a closed pipe) is one line."""
  fd = STANDARD.get(os.path.normpath(path))
  if fd is not None:
    opened = open(os.dup(fd), mode, **options)
  else:
    try:
      opened = open(path, mode, **options)
    except OSError as e:
      raise UserError(f"cannot write into {path}: {e.strerror or e}") from None
  try:
    with opened as f:
      yield f
      f.flush()
  except OSError as e:
    if isinstance(e, UserError) or e.filename not in (None, path):
      raise
    raise write_failed(path, e, into=True) from None


@contextlib.contextmanager
def output_dir(path):
  """Yields a new, empty temporary directory beside ``path`` (its parent
  made if need be) to fill; renames it to ``path`` when the block ends
  cleanly (``path`` must not exist), removes it otherwise. A reader of the parent (TF Serving scanning an export
  root for numbered versions) never sees half of it."""
  if os.path.exists(path):
    raise ExistingFileError(f"{path} exists; nothing was written")
  os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
  partial = _partial(path)
  with locked(path):
    sweep_partials(path)
    try:
      os.makedirs(partial)
      yield partial
      os.rename(partial, path)
    finally:
      files.remove_tree(partial)
