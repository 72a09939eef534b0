"""The Transformer with rotary position embeddings in every self-attention
(RoFormer) and no absolute positions (its hparams sets say
``pos="none"``)."""

import keras

from t2t_keras import registry
from t2t_keras.layers.rotary_attention import RotaryMultiHeadAttention
from t2t_keras.layers.spec import layer_spec
from t2t_keras.models.transformer import Transformer


@registry.register_model("transformer_rotary")
@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerRotary(Transformer):
  """As ``Transformer``; self-attention is ``RotaryMultiHeadAttention``."""

  def stack_options(self):
    return dict(super().stack_options(),
                self_attention=layer_spec(RotaryMultiHeadAttention))
