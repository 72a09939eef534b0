"""Recording attention weights for inspection (t2t-attention).

Inside ``with recording() as weights:`` every ``MultiHeadAttention``
called stores its softmax weights [batch, h, length_q, length_k] in the
dict ``weights`` under the layer itself (the last call wins), so that a tool
can read them by walking the model's blocks. Called eagerly they are
values; called while a function is traced (a training step's loss,
``training.guided_alignment``) they are that trace's tensors. Outside the
block nothing is recorded and attention layers return what they always
return. Recordings are per thread (MirroredStrategy traces its replicas in
threads of their own).
"""

import contextlib
import threading

_LOCAL = threading.local()


def _active():
  if not hasattr(_LOCAL, "stack"):
    _LOCAL.stack = []
  return _LOCAL.stack


@contextlib.contextmanager
def recording():
  """Yields a dict {attention layer: float32 weights [batch, h, q, k]}."""
  weights = {}
  _active().append(weights)
  try:
    yield weights
  finally:
    _active().remove(weights)


def is_recording():
  return bool(_active())


def record(layer, weights):
  """Stores ``weights`` of ``layer`` in the innermost active recording."""
  _active()[-1][layer] = weights
