"""tensor2tensor's ``transformer_relative``: the Transformer with relative
position representations in every self-attention (Shaw et al. 2018) and no
absolute positions (its hparams sets say ``pos="none"``)."""

import dataclasses

import keras

from t2t_keras import registry
from t2t_keras.layers.relative_attention import RelativeMultiHeadAttention
from t2t_keras.layers.spec import layer_spec
from t2t_keras.models.config import TransformerConfig
from t2t_keras.models.transformer import Transformer


@dataclasses.dataclass(frozen=True)
class RelativeTransformerConfig(TransformerConfig):
  max_relative_position: int   # k: distances are clipped to [-k, k]


@registry.register_model("transformer_relative")
@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerRelative(Transformer):
  """As ``Transformer``; self-attention is ``RelativeMultiHeadAttention``."""

  config_class = RelativeTransformerConfig

  def stack_options(self):
    return dict(super().stack_options(), self_attention=layer_spec(
        RelativeMultiHeadAttention,
        max_relative_position=self.config.max_relative_position))
