"""Imported first by every t2t-* command that runs TensorFlow: imports it
with the process's standard error sent to /dev/null, so that its C++
start-up lines (the oneDNN notice, "Could not find cuda drivers", cuInit
errors, absl's "All log messages before absl::InitializeLog()") do not open
the command's output. ``--tf_logs`` on the command line keeps them, and
T2T_NATIVE_LOGS=1 then keeps the library's later C++ notes
(``logs.native_stderr_silenced``) on as well. Python errors raised by the
import itself are still shown. (t2t-bleu and t2t-evalb never import
TensorFlow, and start in a fraction of a second.)
"""

import os
import sys

TF_LOGS_FLAG = "--tf_logs"


def _wants_tf_logs(argv):
  return any(a in (TF_LOGS_FLAG, TF_LOGS_FLAG + "=true",
                   TF_LOGS_FLAG + "=1") for a in argv)


def _import():
  if _wants_tf_logs(sys.argv):
    os.environ["T2T_NATIVE_LOGS"] = "1"
    return
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  from t2t_keras.logs import native_stderr_silenced  # pylint: disable=g-import-not-at-top
  with native_stderr_silenced():
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    tf.config.list_physical_devices()   # cuInit and friends log here


_import()
