"""Imported by ``common.setup`` for every t2t-* command that runs
TensorFlow, after the command line's checks and before anything else
imports it: imports it (and lists the devices) with the process's standard
error held back, so that its C++ start-up lines (the oneDNN notice, "Could
not find cuda drivers", cuInit errors, absl's "All log messages before
absl::InitializeLog()") do not open the command's output. They are kept
(``logs.KEPT_LINES``): t2t-trainer --worker_gpu quotes the device error
when it sees fewer GPUs than asked. After the import, TensorFlow's C++
warnings and errors reach standard error (TF_CPP_MIN_LOG_LEVEL=1: INFO
lines stay hidden). ``--tf_logs`` on the command line shows everything,
and T2T_NATIVE_LOGS=1 then keeps the library's later C++ notes
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


class _WithoutMatplotlib:
  """An import hook under which matplotlib cannot be imported. Keras imports
  matplotlib.pyplot when TensorFlow imports it, for image galleries no
  command draws (it falls back to None without matplotlib): about 0.6 s of
  every command's start. Only while TensorFlow is imported; t2t-attention
  imports matplotlib itself afterwards."""

  def find_spec(self, name, path=None, target=None):
    del path, target
    if name == "matplotlib" or name.startswith("matplotlib."):
      raise ImportError(f"{name}: not while TensorFlow is imported")
    return None


def _import_tensorflow():
  hook = _WithoutMatplotlib()
  sys.meta_path.insert(0, hook)
  try:
    import tensorflow as tf
  finally:
    sys.meta_path.remove(hook)
  return tf


def _import():
  if _wants_tf_logs(sys.argv):
    os.environ["T2T_NATIVE_LOGS"] = "1"
    _import_tensorflow()
    return
  # TensorFlow's C++ INFO lines stay hidden for the whole run; its warnings
  # and errors after the import reach the user.
  if not os.environ.get("TF_CPP_MIN_LOG_LEVEL"):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"
  from t2t_keras.io.logs import native_stderr_kept
  with native_stderr_kept():
    tf = _import_tensorflow()
    tf.config.list_physical_devices()   # cuInit and friends log here


_import()
