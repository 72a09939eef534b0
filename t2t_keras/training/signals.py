"""SIGTERM, SIGINT and SIGHUP during training (a job scheduler's preemption,
Ctrl-C, a closed terminal or dropped ssh session):
the update in flight ends, the step reached is checkpointed (CheckpointHook
at the end of ``fit``) and ``fit`` returns with ``trainer.interrupted`` set
to the signal's number; t2t-trainer then says where the run resumes. On a
multi-worker run the signalled worker votes to stop (``training.cluster``)
and every worker stops after the same update, the one after the update in
flight when the signal came (that update carries the vote), and saves it
together; one signalled node never leaves the others waiting in a
collective. No
evaluation runs on the way out (a scheduler's grace period is short). A
second signal acts at once, with the handlers that were there before.
"""

import signal
import threading
import time

from t2t_keras.training.cluster import ANY
from t2t_keras.training.hooks import TrainingHook

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class SignalStopHook(TrainingHook):
  """Sets ``trainer.stop_reason`` and ``trainer.interrupted`` on SIGTERM,
  SIGINT or SIGHUP, between ``begin`` and ``end`` (in the main thread only: Python
  delivers signals there)."""

  def __init__(self):
    self.previous = {}
    self.asked = None      # the signal's name, on the worker that got it

  def attach(self, trainer):
    trainer.cluster.ballot("stop", ANY)

  def _stop(self, trainer, signum):
    """Stops ``trainer`` after this update with one worker; with several,
    votes to stop, and every worker stops at the next shared decision."""
    trainer.interrupted = signum
    trainer.signalled_at = time.monotonic()
    # The update running when it came (the loop counts an update once its
    # call returns).
    trainer.signalled_during = trainer.step + 1
    self.asked = signal.Signals(signum).name
    if trainer.cluster.workers == 1:
      trainer.stop_reason = trainer.stop_reason or self.asked
    else:
      trainer.cluster.vote("stop", 1.0)

  def after_update(self, trainer, step, logs):
    if trainer.cluster.decision("stop", step) and trainer.stop_reason is None:
      trainer.stop_reason = self.asked or "another worker's signal"
      if trainer.interrupted is None:
        # Stopped for another worker's signal: it leaves as quickly.
        trainer.interrupted = signal.SIGTERM
        trainer.stopped_for_peer = True

  def begin(self, trainer, restored):
    del restored
    if self.previous or threading.current_thread() is not \
        threading.main_thread():
      return

    def stop(signum, frame):
      del frame
      self._stop(trainer, signum)
      self._restore()

    # A signal the process was started ignoring stays ignored (nohup's
    # SIGHUP, a background job's SIGINT).
    self.previous = {s: signal.getsignal(s) for s in SIGNALS
                     if signal.getsignal(s) is not signal.SIG_IGN}
    for s in self.previous:
      signal.signal(s, stop)

  def _restore(self):
    for s, handler in self.previous.items():
      signal.signal(s, handler)
    self.previous = {}

  def end(self, trainer):
    del trainer
    self._restore()
