"""Where tensor2tensor's ``transformer`` computes other than the paper, as
layers, so that a model imported from a tensor2tensor run
(``models.transformer_t2t``) computes what it computed.

- Its timing signal (``add_timing_signal_1d``): sines in the first half of
  the channels, cosines in the second, not interleaved, with frequencies

      w_i = exp(-i * ln(10000) / (d/2 - 1)),  i = 0 .. d/2 - 1

  where the paper's are 10000^(-2i/d) = exp(-i * ln(10000) / (d/2)); an odd
  d gets one zero channel last.
- Its embedding (``symbol_modality`` bottom): the row times sqrt(d_model),
  and the zero vector for id 0 (padding), which is also the decoder's
  start: tensor2tensor shifts the embedded targets right by a zero vector.
"""

import math

import keras
from keras import ops

from t2t_keras.ids import PAD_ID
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.positional_encoding import SinusoidalPositionalEncoding


def timing_signal(positions, depth):
  """tensor2tensor's signal at ``positions`` (int or float [length]):
  float32 [length, depth]."""
  half = depth // 2
  increment = math.log(10000.0) / max(half - 1, 1)
  frequencies = ops.exp(ops.arange(half, dtype="float32") * -increment)
  angles = ops.cast(positions, "float32")[:, None] * frequencies[None]
  signal = ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=1)
  if depth % 2:
    signal = ops.pad(signal, ((0, 0), (0, 1)))
  return signal


@keras.saving.register_keras_serializable(package="t2t_keras")
class T2TTimingSignal(SinusoidalPositionalEncoding):
  """Adds ``timing_signal``: ``SinusoidalPositionalEncoding`` (same call
  args and shapes) with tensor2tensor's sinusoids."""

  encoding = staticmethod(timing_signal)


@keras.saving.register_keras_serializable(package="t2t_keras")
class T2TTokenEmbedding(TokenEmbedding):
  """``TokenEmbedding`` whose id 0 embeds as the zero vector; the
  pre-softmax product (``reverse=True``) is unchanged (W's row 0 still
  gives padding's logit).

  ``call(ids)``: int [batch, length] -> [batch, length, d_model].
  """

  def call(self, inputs, reverse=False, **kwargs):
    vectors = super().call(inputs, reverse=reverse, **kwargs)
    if reverse:
      return vectors
    real = ops.not_equal(ops.cast(inputs, "int32"), PAD_ID)
    return vectors * ops.cast(real, vectors.dtype)[..., None]
