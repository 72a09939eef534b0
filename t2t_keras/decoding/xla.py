"""Searches compiled with XLA (``tf.function(jit_compile=True)``).

XLA has no kernel for ``InplaceUpdate``, the in-place cache write of the
graph path (``kernels.cache_write``): a search traced for XLA writes its
cache with a select, which XLA fuses and updates in place itself. Every XLA-compiled
search is made here, so that its trace is always one XLA can compile.
"""

import tensorflow as tf

from t2t_keras.kernels.cache_write import xla_cache_writes


def xla_function(fn, **options):
  """``fn`` as a ``tf.function(jit_compile=True, **options)`` whose traces
  (the first call, and each new input shape) write caches as XLA can
  compile. Returns a callable with the same arguments."""
  compiled = tf.function(fn, jit_compile=True, **options)

  def call(*args, **kwargs):
    with xla_cache_writes():
      return compiled(*args, **kwargs)
  return call


def traced(fn, xla, **options):
  """``fn`` as a ``tf.function(**options)``, compiled with XLA if ``xla``
  (``xla_function``)."""
  return xla_function(fn, **options) if xla else tf.function(fn, **options)
