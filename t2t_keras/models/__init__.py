"""Models: the contract (``Seq2SeqModel``), the Transformer and its variants,
and a model prepared for decoding (``prepare_for_decoding``).

Importing this package registers the built-in models."""

from t2t_keras.models.base import Seq2SeqModel
from t2t_keras.models.builder import build_model
from t2t_keras.models.config import TransformerConfig
from t2t_keras.models.prepared import prepare_for_decoding
from t2t_keras.models.transformer import Transformer
from t2t_keras.models.transformer_relative import TransformerRelative
from t2t_keras.models.transformer_rotary import TransformerRotary
from t2t_keras.models.transformer_t2t import TransformerT2T

# Importing the model modules registers them; these names are the package's.
__all__ = ["Seq2SeqModel", "build_model", "TransformerConfig",
           "prepare_for_decoding", "Transformer",
           "TransformerRelative", "TransformerRotary", "TransformerT2T"]
