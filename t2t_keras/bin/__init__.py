"""Command-line entry points, one thin file per t2t-* command.

Importing this package imports TensorFlow with the process's standard error
sent to /dev/null, so that its C++ start-up lines (the oneDNN notice, "Could
not find cuda drivers", cuInit errors, absl's "All log messages before
absl::InitializeLog()") do not open every command's output; ``--tf_logs``
on the command line keeps them, and TensorFlow's later C++ logging, on.
Python errors raised by the import itself are still shown.
"""

import os
import sys

TF_LOGS_FLAG = "--tf_logs"


def _wants_tf_logs(argv):
  return any(a in (TF_LOGS_FLAG, TF_LOGS_FLAG + "=true",
                   TF_LOGS_FLAG + "=1") for a in argv)


def _quiet_tensorflow_import():
  """Imports TensorFlow and initializes its devices with fd 2 silenced;
  with ``--tf_logs``, T2T_NATIVE_LOGS=1 keeps the library's later C++
  notes (``logs.native_stderr_silenced``) on as well."""
  if _wants_tf_logs(sys.argv):
    os.environ["T2T_NATIVE_LOGS"] = "1"
    return
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  from t2t_keras.logs import native_stderr_silenced  # pylint: disable=g-import-not-at-top
  with native_stderr_silenced():
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    tf.config.list_physical_devices()   # cuInit and friends log here


_quiet_tensorflow_import()
