"""Where t2t_keras keeps what it builds once a machine and reuses (the
rows-product handler, compiled XLA programs): ``$T2T_KERAS_CACHE``, default
``~/.cache/t2t_keras``. No TensorFlow or Keras import: the commands set
TensorFlow's cache before they import it."""

import os


def cache_folder():
  """$T2T_KERAS_CACHE, default ~/.cache/t2t_keras."""
  return os.environ.get("T2T_KERAS_CACHE") or os.path.join(
      os.path.expanduser("~"), ".cache", "t2t_keras")


def keep_xla_programs(environ):
  """TensorFlow's persistent cache of XLA programs in ``cache_folder()``'s
  ``tf_xla``, set in ``environ`` (TF_XLA_FLAGS, unless it names a cache
  already), so that a later ``--xla`` command loads the programs of the
  shapes an earlier one compiled instead of compiling them again (the
  quickstart model, 4,000 lines: 21.4 -> 12.5 s the second time).
  TensorFlow reads TF_XLA_FLAGS once: set it before the import."""
  flags = environ.get("TF_XLA_FLAGS", "")
  if "--tf_xla_persistent_cache_directory" not in flags:
    folder = os.path.join(cache_folder(), "tf_xla")
    environ["TF_XLA_FLAGS"] = (
        f"{flags} --tf_xla_persistent_cache_directory={folder}".strip())
