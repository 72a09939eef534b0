"""The one error class for user mistakes.

A ``UserError`` is something the user can fix from the message alone: a bad
flag or hparams value, an unknown name, a missing or malformed file, a model
that cannot do what was asked. The ``t2t-*`` commands print it as one line
(``error: ...``) and exit with code 2. Every other exception is a bug or an
environment failure and keeps its traceback.

It subclasses ``ValueError`` so that library callers catching ``ValueError``
keep working; the file variants also subclass the matching OS error.
"""

import signal
import sys


class UserError(ValueError):
  """A mistake in the user's input; the message names the input and what
  was expected."""


class MissingFileError(UserError, FileNotFoundError):
  """A file or directory the user named (or a command needs) is absent."""


class ExistingFileError(UserError, FileExistsError):
  """A file the command would write exists and must not be overwritten."""


class Interrupted(BaseException):
  """The command was stopped by a signal (SIGINT: Ctrl-C; SIGTERM: a job
  scheduler, ``kill``). The commands print the message as one line and
  exit with 128 + the signal's number, as a shell does; what they were
  writing is left as it was before (``outputs``), and t2t-trainer saves a
  checkpoint first and says so.

  A BaseException, as KeyboardInterrupt is: code that handles errors
  (``except Exception``; Keras rewraps what a layer's call raises) lets it
  pass."""

  def __init__(self, signum, message=None):
    self.signum = int(signum)
    name = signal.Signals(signum).name
    super().__init__(message or f"stopped by {name}; no output was left "
                     "half-written")


_RECEIVED = []   # the signals a command received (bin.common)


def note_signal(signum):
  """Records that the command received ``signum`` (its handler then raises
  ``Interrupted``)."""
  _RECEIVED.append(int(signum))


def signal_received():
  """The first signal ``note_signal`` recorded, or None."""
  return _RECEIVED[0] if _RECEIVED else None


def catch_lost_signals():
  """Makes a signal's exception that Python drops, raised while it ran a
  finalizer or a garbage-collector callback (JAX registers one), a recorded
  signal instead of an "Exception ignored" traceback on stderr: Python
  hands such exceptions to ``sys.unraisablehook``, and the command would
  go on to the end. ``check_signals`` then stops it. Other unraisable
  exceptions go to the hook as before."""
  previous = sys.unraisablehook

  def hook(unraisable):
    error = unraisable.exc_value
    if isinstance(error, Interrupted):
      note_signal(error.signum)
    elif isinstance(error, KeyboardInterrupt):
      note_signal(signal.SIGINT)
    else:
      previous(unraisable)
  sys.unraisablehook = hook
  return previous


def check_signals():
  """Raises ``Interrupted`` for a signal recorded (``note_signal``) whose
  exception was lost on its way up (``catch_lost_signals``). Loops call it
  between units of work."""
  if _RECEIVED:
    raise Interrupted(_RECEIVED[0])
