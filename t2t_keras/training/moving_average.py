"""The moving average's rule, written once for every backend: the training
hook (``training.ema``, TensorFlow) and the JAX sweep
(``benchmarks/val_sweep_jax.py``) both call it. After update t (counted
from 1)

    d_t = min(decay, (1 + t) / (10 + t))
    shadow <- d_t * shadow + (1 - d_t) * w = shadow - (1 - d_t) (shadow - w)

The warm-up d_t is TensorFlow's rule for
``ExponentialMovingAverage(num_updates=t)``. No TensorFlow import: Keras ops
only, so the JAX sweep runs where TensorFlow is not installed.
"""

from keras import ops


def decay_at(decay, step):
  """d_t for update ``step`` (a float scalar, counted from 1) of an average
  of ``decay``: a float scalar tensor."""
  return ops.minimum(decay, (1.0 + step) / (10.0 + step))


def averaged(shadow, weight, d):
  """The average after an update: ``shadow`` moved towards ``weight`` (cast
  to the shadow's dtype) by 1 - ``d``; same shape as ``shadow``."""
  return shadow - (1.0 - d) * (shadow - ops.cast(weight, shadow.dtype))
