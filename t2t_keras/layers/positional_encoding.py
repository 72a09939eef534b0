"""Positional encodings, section 3.5 of the paper.

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

``SinusoidalPositionalEncoding`` follows the formula exactly (sines on even,
cosines on odd dimensions, interleaved). ``LearnedPositionalEmbedding`` is
Table 3 row (E); ``pos="none"`` uses neither (models with relative
positions). Both add the encoding to their input and take an ``offset``
so that one incremental decoding step gets the encoding of its position.
"""

import keras
from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.layers.spec import make_layer


def sinusoid(positions, depth):
  """The paper's encoding at ``positions``.

  Args:
    positions: float or int tensor [length].
    depth: d_model, even.
  Returns:
    float32 tensor [length, depth].
  """
  if depth % 2:
    raise UserError(f"sinusoidal positions need an even depth, got {depth}")
  two_i = ops.arange(0, depth, 2, dtype="float32")          # 2i
  inverse_wavelength = ops.power(10000.0, -two_i / float(depth))
  angles = ops.cast(positions, "float32")[:, None] * inverse_wavelength[None]
  interleaved = ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1)
  return ops.reshape(interleaved, (-1, depth))


@keras.saving.register_keras_serializable(package="t2t_keras")
class SinusoidalPositionalEncoding(keras.layers.Layer):
  """Adds the fixed sinusoidal encoding.

  Call args:
    inputs: [batch, length, d_model].
    offset: scalar int, the position of the first element (decoding).
  Returns:
    [batch, length, d_model], ``inputs + PE[offset:offset + length]``.
  """

  # (positions [length], depth) -> float32 [length, depth]; a variant with
  # other sinusoids (tensor2tensor's) replaces it.
  encoding = staticmethod(sinusoid)

  def call(self, inputs, offset=0):
    _, length, depth = ops.shape(inputs)
    positions = ops.arange(length) + offset
    encoding = self.encoding(positions, depth)
    return inputs + ops.cast(encoding, inputs.dtype)[None]


@keras.saving.register_keras_serializable(package="t2t_keras")
class LearnedPositionalEmbedding(keras.layers.Layer):
  """Adds a learned embedding of each position (Table 3 row (E)).

  Args:
    max_length: number of positions with an embedding; longer inputs are an
      error in eager mode.
    initializer: of the [max_length, d_model] table.

  Call args and returns: as ``SinusoidalPositionalEncoding``.
  """

  def __init__(self, max_length, initializer="glorot_uniform", **kwargs):
    super().__init__(**kwargs)
    self.max_length = int(max_length)
    self.initializer = keras.initializers.get(initializer)

  def build(self, inputs_shape):
    self.table = self.add_weight(
        name="table", shape=(self.max_length, inputs_shape[-1]),
        initializer=self.initializer)
    self.built = True

  def call(self, inputs, offset=0):
    length = ops.shape(inputs)[1]
    positions = ops.arange(length) + offset
    encoding = ops.take(self.table, positions, axis=0)
    return inputs + ops.cast(encoding, inputs.dtype)[None]

  def get_config(self):
    config = super().get_config()
    config.update(max_length=self.max_length,
                  initializer=keras.initializers.serialize(self.initializer))
    return config


def positional_layer(kind, max_length, name, dtype=None):
  """The position layer of a stack: ``kind`` "timing" (sinusoids, the
  paper's default), "emb" (learned), "none" (no absolute positions: returns
  None), or a layer spec (``layers.spec``)."""
  if isinstance(kind, dict):
    return make_layer(kind, None, name=name, dtype=dtype)
  if kind == "timing":
    return SinusoidalPositionalEncoding(name=name, dtype=dtype)
  if kind == "emb":
    return LearnedPositionalEmbedding(max_length, name=name, dtype=dtype)
  if kind == "none":
    return None
  raise UserError(f"unknown positional encoding pos={kind!r}: expected "
                  "'timing' (sinusoids), 'emb' (learned) or 'none'")
