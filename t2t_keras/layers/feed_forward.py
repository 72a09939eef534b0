"""Position-wise feed-forward network, equation (2) of the paper.

    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2
"""

import keras

from t2t_keras.layers.dropout import Dropout
from t2t_keras.layers.dense import Dense
from t2t_keras.layers.rows import apply_to_rows


@keras.saving.register_keras_serializable(package="t2t_keras")
class PositionwiseFeedForward(keras.layers.Layer):
  """Two linear maps with a ReLU between, applied at every position.

  Args:
    filter_size: d_ff, the inner dimension.
    output_size: d_model; defaults to the input's last dimension.
    relu_dropout: dropout on the ReLU output (tensor2tensor's relu_dropout).

  Call args:
    inputs: [batch, length, d_model].
  Returns:
    [batch, length, d_model].
  """

  def __init__(self, filter_size, output_size=None, relu_dropout=0.0,
               kernel_initializer="glorot_uniform", **kwargs):
    super().__init__(**kwargs)
    self.filter_size = int(filter_size)
    self.output_size = output_size
    self.relu_dropout = float(relu_dropout)
    self.kernel_initializer = keras.initializers.get(kernel_initializer)
    self._inner = Dense(
        self.filter_size, activation="relu", name="inner",
        kernel_initializer=self.kernel_initializer, dtype=self.dtype_policy)
    self._dropout = Dropout(self.relu_dropout)
    self._outer = None

  def build(self, inputs_shape):
    self._outer = Dense(
        self.output_size or inputs_shape[-1], name="outer",
        kernel_initializer=self.kernel_initializer, dtype=self.dtype_policy)
    self._inner.build(inputs_shape)
    self._outer.build(tuple(inputs_shape[:-1]) + (self.filter_size,))
    self.built = True

  def linear_maps(self):
    """(x W_1 + b_1 with its ReLU, x W_2 + b_2): the two ``Dense`` layers."""
    return self._inner, self._outer

  def call(self, inputs, training=None):
    hidden = apply_to_rows(self._inner, inputs)
    hidden = self._dropout(hidden, training=training)
    return apply_to_rows(self._outer, hidden)

  def get_config(self):
    config = super().get_config()
    config.update(filter_size=self.filter_size, output_size=self.output_size,
                  relu_dropout=self.relu_dropout,
                  kernel_initializer=keras.initializers.serialize(
                      self.kernel_initializer))
    return config
