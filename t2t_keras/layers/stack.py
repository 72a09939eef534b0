"""What the encoder and decoder stacks share (sections 3.1, 3.5, 5.4)."""

import keras

from t2t_keras.layers.dropout import Dropout
from t2t_keras.layers.layer_norm import LayerNormalization
from t2t_keras.layers.positional_encoding import positional_layer
from t2t_keras.layers.residual import LAYER_NORM_EPSILON
from t2t_keras.layers.spec import make_layer

# Arguments of keras.layers.Layer itself; every other keyword of a stack is
# passed on to each of its layers.
_KERAS_ARGS = ("name", "dtype", "trainable", "autocast")


class Stack(keras.layers.Layer):
  """Shared part of the encoder and decoder stacks: positions, dropout on
  embeddings + positions, N layers, and the final LayerNorm of pre-norm.

  Args:
    num_layers: N.
    pos: "timing" (sinusoids), "emb" (learned), "none", or a layer spec
      (``layers.spec``) of a position layer called as ``layer(x, offset=)``.
    max_length: positions with a learned embedding (pos="emb" only).
    dropout: P_drop.
    norm_position: "post" (the paper) or "pre".
    layer: a layer spec for the N layers; None: ``default_layer``.
    **layer_options: passed to every layer (h, d_k, d_v, d_ff, dropouts,
      sub-layer specs: see ``TransformerBlock``).
  """

  default_layer = None  # EncoderLayer or DecoderLayer, set by subclasses.

  def __init__(self, num_layers, pos="timing", max_length=1024, dropout=0.1,
               norm_position="post", layer=None, **layer_options):
    super().__init__(**{k: layer_options.pop(k) for k in _KERAS_ARGS
                        if k in layer_options})
    self.num_layers = int(num_layers)
    self.pos = pos
    self.max_length = int(max_length)
    self.dropout = float(dropout)
    self.norm_position = norm_position
    self.layer = layer
    self.layer_options = layer_options
    self.positions = positional_layer(pos, max_length, name="positions",
                                      dtype=self.dtype_policy)
    self.input_dropout = Dropout(self.dropout)
    # One attribute per layer, not a list: Keras 3 does not expose lists of
    # layers to TensorFlow's object-based checkpoints.
    for i in range(self.num_layers):
      setattr(self, f"layer_{i}", make_layer(
          layer, self.default_layer, dropout=dropout,
          norm_position=norm_position, dtype=self.dtype_policy,
          name=f"layer_{i}", **layer_options))
    self.final_norm = (
        LayerNormalization(epsilon=LAYER_NORM_EPSILON,
                           dtype=self.dtype_policy, name="final_layer_norm")
        if norm_position == "pre" else None)

  def build(self, x_shape):
    """Nothing of its own: positions, layers and norm build on their first
    call (see ``ResidualBlock.build``)."""
    del x_shape

  @property
  def blocks(self):
    """The N encoder or decoder layers, bottom first."""
    return [getattr(self, f"layer_{i}") for i in range(self.num_layers)]

  def embed_positions(self, x, offset=0, training=None):
    """Dropout(embeddings + positions) for x [batch, length, d_model]."""
    if self.positions is not None:
      x = self.positions(x, offset=offset)
    return self.input_dropout(x, training=training)

  def finish(self, x):
    return self.final_norm(x) if self.final_norm is not None else x

  def get_config(self):
    config = super().get_config()
    config.update(num_layers=self.num_layers, pos=self.pos,
                  max_length=self.max_length, dropout=self.dropout,
                  norm_position=self.norm_position, layer=self.layer,
                  **self.layer_options)
    return config
