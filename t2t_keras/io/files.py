"""The primitives every command changes files with: the library's other
floors write, rename and remove files only through ``io/``
(``tests/test_write_path.py`` holds it), so that each change is made one
way: whole or not at all, and never over a special file.

* ``write_atomic``: bytes to a temporary name beside the file, flushed to
  disk, then renamed over it;
* ``replace``, ``remove``, ``remove_tree``: a rename, a removal that a
  missing file does not fail, a folder's removal;
* ``special``: whether a path is a character or block device, FIFO, socket
  or terminal (written into, never replaced: ``outputs.output_file``).
"""

import contextlib
import os
import shutil
import stat


def write_atomic(path, data):
  """Writes ``data`` (bytes) to ``path`` through ``.NAME.PID.tmp`` beside
  it: a reader sees the old file or the new one, never half of one."""
  folder, name = os.path.split(os.path.abspath(path))
  partial = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
  try:
    with open(partial, "wb") as f:
      f.write(data)
      f.flush()
      os.fsync(f.fileno())
    os.replace(partial, path)
  finally:
    with contextlib.suppress(FileNotFoundError):
      os.remove(partial)


def write_text(path, text):
  """``write_atomic`` of UTF-8 ``text``."""
  write_atomic(path, text.encode("utf-8"))


def replace(source, target):
  """Renames ``source`` to ``target`` (``os.replace``: one step, over a
  file ``target`` may be)."""
  os.replace(source, target)


def remove(path):
  """Removes the file ``path``; True if it was there."""
  try:
    os.remove(path)
  except FileNotFoundError:
    return False
  return True


def remove_tree(path):
  """Removes the folder ``path`` and all it holds (or the file or link
  ``path``), if it is there."""
  if os.path.islink(path) or os.path.isfile(path):
    remove(path)
  else:
    shutil.rmtree(path, ignore_errors=True)


def special(path):
  """Whether ``path`` (followed through links) is a character or block
  device, a FIFO or a socket: a file a command writes into, never over."""
  try:
    mode = os.stat(path).st_mode
  except OSError:
    return False
  return (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)
          or stat.S_ISSOCK(mode))
