"""Fast paths: where t2t_keras departs from the plain ``keras.ops`` formulas
for speed. The paper's layers, the loss and the optimizer are written as the
paper writes them; each of them asks ``enabled()`` and, where a kernel here
fits, calls it instead. Every kernel is tested against the plain version
(values and gradients: tests/test_layers.py, tests/test_training.py,
tests/test_weights_once.py).

    dense         a float32 input gradient through a transposed copy of W
    layer_norm    LayerNorm's closed-form gradient
    dropout       masks from 16 random bits an element
    loss          the label-smoothed cross-entropy as two XLA kernels
    fused_adam    Adam through TensorFlow's one-kernel ResourceApplyAdam
    distribute    the trainer all-reduces gradients itself

and, read by the model prepared for decoding (``models.prepared``) only:

    weights_once  decoding reads mixed-precision weights cast once a batch
    step_attention  a decoding step's attention on Eigen's kernels
    one_row       a one-row decoding step's products on Eigen's kernels
    kernel_layout  JAX searches read the decoder's matrices held for few rows
    rows_product  ...packed, through an XLA FFI handler compiled here
    layout_probe  ...in the layout measured fastest for the search's rows
    quantize      decoding weights rounded to int8 or bfloat16, once

The rule: on when Keras runs on TensorFlow and no GPU is visible, the only
place they were measured to help (2-core CPUs); off under JAX and on GPUs,
where they were never measured, except fused_adam: ResourceApplyAdam has
GPU kernels and computes Keras's Adam update (tested against it), and
replaces about ten elementwise ops a variable by one wherever it runs; and
kernel_layout, which is for JAX and on where JAX's devices are CPUs
(measured there; its own ``enabled``), and read where ``layout_probe``
times it faster.
``T2T_KERAS_KERNELS=0`` turns them off, ``=1`` on. Keras's private API is used from this directory only, against
the Keras versions ``requirements.txt`` pins.
"""

import functools
import os

import keras


@functools.lru_cache(maxsize=None)
def _default():
  if keras.backend.backend() != "tensorflow":
    return False
  import tensorflow as tf
  return not tf.config.list_physical_devices("GPU")


def enabled(on_gpus=False):
  """Whether the fast paths run (see the module docstring). ``on_gpus``:
  a kernel that TensorFlow also has for GPUs and that computes the plain
  formula's update (fused_adam), so it runs there too unless
  T2T_KERAS_KERNELS=0."""
  forced = os.environ.get("T2T_KERAS_KERNELS", "")
  if forced in ("0", "1"):
    return forced == "1" and keras.backend.backend() == "tensorflow"
  if on_gpus:
    return keras.backend.backend() == "tensorflow"
  return _default()


def in_xla():
  """Whether the ops built now are inside a function XLA compiles
  (``tf.function(jit_compile=True)``), where TensorFlow's kernels never
  run and the plain ops are the ones to give XLA."""
  if keras.backend.backend() != "tensorflow":
    return False
  import tensorflow as tf
  from tensorflow.python.ops import control_flow_util
  return control_flow_util.GraphOrParentsInXlaContext(
      tf.compat.v1.get_default_graph())
