"""One trainer per run directory: ``<run>/trainer.lock`` holds the pid, host
and start time of the trainer that writes there, and is a lease: its
holder touches it every ``REFRESH_SECONDS`` while it trains.

A second trainer on the same directory (a second terminal, a re-submitted
cluster job) stops with one line naming the holder. A lock whose process is
gone (its pid no longer exists on this host: killed, crashed, the machine
rebooted, or the pid is this trainer's own, reused by a restarted
container) is taken over with a one-line note; so is a damaged lock file.
A lock from another host, whose pid cannot be checked, is taken over with
a one-line note once it has not been refreshed for ``STALE_SECONDS`` (a
chief rescheduled onto another node after a node loss or an OOM kill
restarts by itself); refreshed within that time, it is refused. Only the
chief of a multi-worker run takes it.
"""

import datetime
import json
import os
import socket
import threading
import time

from t2t_keras.errors import UserError
from t2t_keras.io import files
from t2t_keras.io.logs import log_line
from t2t_keras.io.outputs import alive

LOCK_FILE = "trainer.lock"
# The lease: refreshed this often, taken over from another host when not
# refreshed for this long (ten refreshes missed: a paused or partitioned
# holder has time to come back; clocks of hosts may differ by minutes).
REFRESH_SECONDS = 60
STALE_SECONDS = 600


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
        return self._from_another_host(holder, text)
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
      return self._take(text)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      f.write(text)
    return self._held()

  def _from_another_host(self, holder, text):
    try:
      idle = time.time() - os.stat(self.path).st_mtime
    except OSError:
      idle = 0.0
    who = f"pid {holder['pid']} on {holder['host']}"
    if idle <= STALE_SECONDS:
      raise UserError(
          f"{os.path.dirname(self.path)} is being trained by {who} (since "
          f"{holder.get('started', '?')}, {self.path} refreshed "
          f"{idle:.0f} s ago); use another --output_dir (a lock not "
          f"refreshed for {STALE_SECONDS // 60} minutes is taken over)") \
          from None
    self.log(f"taking over {self.path}: its trainer ({who}) has not "
             f"refreshed it for {datetime.timedelta(seconds=int(idle))} "
             f"(more than {STALE_SECONDS // 60} minutes)")
    return self._take(text)

  def _take(self, text):
    files.write_text(self.path, text)
    return self._held()

  def _held(self):
    """Holds the lease: a thread touches the lock every REFRESH_SECONDS."""
    _HELD.add(self.path)
    self._stop = threading.Event()

    def refresh():
      while not self._stop.wait(REFRESH_SECONDS):
        try:
          os.utime(self.path)
        except OSError:
          pass     # gone or unreachable for a moment: the next try may do
    self._thread = threading.Thread(target=refresh, daemon=True,
                                    name="trainer.lock lease")
    self._thread.start()
    return self

  def release(self):
    stop = getattr(self, "_stop", None)
    if stop is not None:
      stop.set()
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
