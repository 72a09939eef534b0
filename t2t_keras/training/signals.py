"""SIGTERM, SIGINT and SIGHUP during training (a job scheduler's preemption,
Ctrl-C, a closed terminal or dropped ssh session):
the update in flight ends, the step reached is checkpointed (CheckpointHook
at the end of ``fit``) and ``fit`` returns with ``trainer.interrupted`` set
to the signal's number; t2t-trainer then says where the run resumes. No
evaluation runs on the way out (a scheduler's grace period is short). A
second signal acts at once, with the handlers that were there before.
"""

import signal
import threading

from t2t_keras.training.hooks import TrainingHook

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class SignalStopHook(TrainingHook):
  """Sets ``trainer.stop_reason`` and ``trainer.interrupted`` on SIGTERM,
  SIGINT or SIGHUP, between ``begin`` and ``end`` (in the main thread only: Python
  delivers signals there)."""

  def __init__(self):
    self.previous = {}

  def begin(self, trainer, restored):
    del restored
    if self.previous or threading.current_thread() is not \
        threading.main_thread():
      return

    def stop(signum, frame):
      del frame
      trainer.interrupted = signum
      trainer.stop_reason = signal.Signals(signum).name
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
