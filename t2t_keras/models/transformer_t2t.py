"""tensor2tensor's ``transformer`` as it computes, for runs imported from
tensor2tensor (``t2t-import``): the Transformer with tensor2tensor's timing
signal and embedding (``layers.tensor2tensor``), and its target-space
embedding, a [32, d_model] table one row of which (the problem's
``target_space_id``) is added to every embedded input; with
``max_relative_position`` > 0, its ``transformer_relative``'s
self-attention (``layers.relative_attention``, the same equations)."""

import dataclasses

import keras
from keras import ops

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.ids import PAD_ID
from t2t_keras.layers import masks
from t2t_keras.layers.relative_attention import RelativeMultiHeadAttention
from t2t_keras.layers.spec import layer_spec
from t2t_keras.layers.tensor2tensor import T2TTimingSignal, T2TTokenEmbedding
from t2t_keras.models.config import TransformerConfig
from t2t_keras.models.transformer import Transformer

TARGET_SPACES = 32    # rows of tensor2tensor's target_space_embedding


@dataclasses.dataclass(frozen=True)
class T2TTransformerConfig(TransformerConfig):
  target_space_id: int   # row of target_space_embedding; -1: none added
  max_relative_position: int = 0  # > 0: its transformer_relative's k

  def __post_init__(self):
    super().__post_init__()
    if not -1 <= self.target_space_id < TARGET_SPACES:
      raise UserError(f"target_space_id must be in [-1, {TARGET_SPACES}), "
                      f"got {self.target_space_id!r}")


@registry.register_model("transformer_t2t")
@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerT2T(Transformer):
  """As ``Transformer``, computing as tensor2tensor's ``transformer``."""

  config_class = T2TTransformerConfig
  embedding_class = T2TTokenEmbedding

  def __init__(self, hparams, input_vocab_size, target_vocab_size=None,
               **kwargs):
    super().__init__(hparams, input_vocab_size, target_vocab_size, **kwargs)
    self.target_space_embedding = None

  def build(self, input_shape=None):
    if self.target_space_embedding is None:
      self.target_space_embedding = self.add_weight(
          name="target_space_embedding",
          shape=(TARGET_SPACES, self.config.hidden_size),
          initializer=keras.initializers.RandomNormal(
              stddev=self.config.hidden_size ** -0.5))
    super().build(input_shape)

  def stack_options(self):
    options = super().stack_options()
    if self.config.pos == "timing":
      options["pos"] = layer_spec(T2TTimingSignal)
    if self.config.max_relative_position > 0:
      options["self_attention"] = layer_spec(
          RelativeMultiHeadAttention,
          max_relative_position=self.config.max_relative_position)
    return options

  def encode(self, inputs, training=None):
    """As ``Transformer.encode``, with the target space's row added to
    every embedded input (padding included, as tensor2tensor does)."""
    bias = masks.padding_bias(inputs, PAD_ID)
    x = self.input_embedding(inputs)
    if self.config.target_space_id >= 0:
      row = ops.cast(self.target_space_embedding[
          self.config.target_space_id], x.dtype)
      x = x + row
    return self.encoder(x, bias=bias, training=training), bias
