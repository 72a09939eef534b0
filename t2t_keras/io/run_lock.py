"""One trainer per run directory: ``<run>/trainer.lock`` holds the pid, host
and start time of the trainer that writes there.

A second trainer on the same directory (a second terminal, a re-submitted
cluster job) stops with one line naming the holder. A lock whose process is
gone (its pid no longer exists on this host: killed, crashed, the machine
rebooted, or the pid is this trainer's own, reused by a restarted
container) is taken over with a one-line note; so is a damaged lock file.
A lock held from another host cannot be checked and is never taken over.
Only the chief of a multi-worker run takes it.
"""

import datetime
import json
import os
import socket

from t2t_keras.errors import UserError
from t2t_keras.io import files
from t2t_keras.io.logs import log_line
from t2t_keras.io.outputs import alive

LOCK_FILE = "trainer.lock"


# The lock files this process holds.
_HELD = set()


class RunLock:
  """A context manager holding ``<run_dir>/trainer.lock``."""

  def __init__(self, run_dir, log=log_line):
    self.path = os.path.join(run_dir, LOCK_FILE)
    self.log = log
    self.mine = {"pid": os.getpid(), "host": socket.gethostname(),
                 "started": datetime.datetime.now().isoformat(
                     timespec="seconds")}

  def _holder(self):
    """The lock's contents, or None if it is not a lock we can read."""
    try:
      with open(self.path, encoding="utf-8") as f:
        holder = json.load(f)
      return holder if {"pid", "host"} <= set(holder) else None
    except (OSError, ValueError):
      return None

  def acquire(self):
    text = json.dumps(self.mine)
    try:
      fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
      holder = self._holder()
      if holder and holder["host"] != self.mine["host"]:
        raise UserError(
            f"{os.path.dirname(self.path)} is being trained by pid "
            f"{holder['pid']} on {holder['host']} (since "
            f"{holder.get('started', '?')}, {self.path}); use another "
            "--output_dir, or delete the lock if that process is gone") \
            from None
      # Our own pid in a lock this process has not taken: a restarted
      # container reusing the pid of the trainer that left it.
      ours = int(holder["pid"]) == os.getpid() if holder else False
      if holder and ((ours and self.path in _HELD) or
                     (not ours and alive(int(holder["pid"])))):
        raise UserError(
            f"{os.path.dirname(self.path)} is being trained by pid "
            f"{holder['pid']} on this host (since "
            f"{holder.get('started', '?')}); wait for it or stop it, or use "
            "another --output_dir") from None
      self.log(f"taking over {self.path}: " + (
          f"its trainer (pid {holder['pid']}) is gone" if holder else
          "it was damaged"))
      files.write_text(self.path, text)
      _HELD.add(self.path)
      return self
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      f.write(text)
    _HELD.add(self.path)
    return self

  def release(self):
    _HELD.discard(self.path)
    holder = self._holder()
    if holder and holder.get("pid") == self.mine["pid"] and \
        holder.get("host") == self.mine["host"]:
      os.remove(self.path)

  def __enter__(self):
    return self.acquire()

  def __exit__(self, *exc):
    self.release()
    return False
