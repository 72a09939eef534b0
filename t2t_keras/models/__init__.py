"""Models: the Transformer and its decoding cache."""

from t2t_keras.models.config import TransformerConfig
from t2t_keras.models.transformer import EOS_ID, PAD_ID, Transformer
from t2t_keras.models.builder import build_model
