"""Recording attention weights for inspection (t2t-attention).

Inside ``with recording() as weights:`` every ``MultiHeadAttention`` called
eagerly stores its softmax weights [batch, h, length_q, length_k] in the
dict ``weights`` under the layer itself (the last call wins), so that a tool
can read them by walking the model's blocks. Outside the block nothing is
recorded and attention layers return what they always return.
"""

import contextlib

_ACTIVE = []


@contextlib.contextmanager
def recording():
  """Yields a dict {attention layer: float32 weights [batch, h, q, k]}."""
  weights = {}
  _ACTIVE.append(weights)
  try:
    yield weights
  finally:
    _ACTIVE.remove(weights)


def is_recording():
  return bool(_ACTIVE)


def record(layer, weights):
  """Stores ``weights`` of ``layer`` in the innermost active recording."""
  _ACTIVE[-1][layer] = weights
