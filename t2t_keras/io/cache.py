"""Where t2t_keras keeps what it builds once a machine and reuses (the
rows-product handler, the programs TensorFlow's XLA and JAX compile):
``$T2T_KERAS_CACHE``, default ``~/.cache/t2t_keras``. No TensorFlow or
Keras import: the commands set TensorFlow's cache before they import it."""

import hashlib
import importlib.metadata
import os
import platform
import tempfile


def cache_folder():
  """$T2T_KERAS_CACHE, default ~/.cache/t2t_keras."""
  return os.environ.get("T2T_KERAS_CACHE") or os.path.join(
      os.path.expanduser("~"), ".cache", "t2t_keras")


def cpu_key():
  """What code compiled for this machine depends on: the CPU's model and
  flags (-march=native, XLA's CPU target)."""
  try:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      lines = [l for l in f if l.startswith(("model name", "flags"))]
    return "".join(sorted(set(lines)))
  except OSError:
    return platform.processor() + platform.machine()


def keep_xla_programs(environ):
  """TensorFlow's persistent cache of XLA programs in ``xla_folder()``,
  set in ``environ`` (TF_XLA_FLAGS, unless it names a cache already), so
  that a later ``--xla`` command loads the programs of the shapes an
  earlier one compiled instead of compiling them again (the quickstart
  model, 4,000 lines: 21.5 -> 13.0 s the second time). TensorFlow reads
  TF_XLA_FLAGS once: set it before the import. Returns a line saying why
  the cache is not used (its folder cannot be written), or None."""
  flags = environ.get("TF_XLA_FLAGS", "")
  if "--tf_xla_persistent_cache_directory" not in flags:
    folder = xla_folder()
    unusable = _unwritable(folder)
    if unusable:
      # TensorFlow would fail the first compile on it: go without.
      return (f"note: XLA's program cache {folder} cannot be used "
              f"({unusable}); compiling without it (set T2T_KERAS_CACHE to "
              "a writable folder to keep the programs)")
    environ["TF_XLA_FLAGS"] = (
        f"{flags} --tf_xla_persistent_cache_directory={folder}".strip())
  return None


def _unwritable(folder):
  """Why ``folder`` cannot be made or written, or None."""
  try:
    os.makedirs(folder, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder):
      pass
  except OSError as e:
    return e.strerror or str(e)
  return None


def keep_jax_programs():
  """JAX's persistent compilation cache in ``cache_folder()``'s ``jax``
  (unless JAX_COMPILATION_CACHE_DIR names one), every program kept (unless
  JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS says otherwise: a start's
  many small programs cost more than its searches), so that a later
  process loads what a decoder compiled instead of compiling it again. Set
  it before the model is built: its start-up programs are kept too. (JAX
  keys its CPU programs by the machine's features itself.)"""
  import jax
  if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
    jax.config.update("jax_compilation_cache_dir",
                      os.path.join(cache_folder(), "jax"))
  if not os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"):
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)


def xla_folder():
  """``cache_folder()``'s ``tf_xla/VERSION-CPU``: TensorFlow keys its
  programs by their graphs alone, so a folder a TensorFlow version and CPU
  (a program built for another CPU's instructions, or by another XLA, must
  not be loaded)."""
  try:
    version = importlib.metadata.version("tensorflow")
  except importlib.metadata.PackageNotFoundError:
    version = "unknown"
  cpu = hashlib.sha256(cpu_key().encode()).hexdigest()[:12]
  return os.path.join(cache_folder(), "tf_xla", f"{version}-{cpu}")
