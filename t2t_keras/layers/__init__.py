"""Keras layers of the Transformer, one per file; every paper equation lives
in one of them: (1) dot_product_attention, multi-head attention
multi_head_attention, (2) feed_forward, section 3.4 embedding, section 3.5
positional_encoding, sections 3.1/5.4 residual, encoder and decoder."""

from t2t_keras.layers import masks
from t2t_keras.layers.decoder import DecoderLayer, TransformerDecoder
from t2t_keras.layers.dense import Dense
from t2t_keras.layers.dot_product_attention import ScaledDotProductAttention
from t2t_keras.layers.dropout import Dropout
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.encoder import EncoderLayer, TransformerEncoder
from t2t_keras.layers.feed_forward import PositionwiseFeedForward
from t2t_keras.layers.layer_norm import LayerNormalization
from t2t_keras.layers.multi_head_attention import MultiHeadAttention
from t2t_keras.layers.positional_encoding import (LearnedPositionalEmbedding,
                                                 SinusoidalPositionalEncoding,
                                                 sinusoid)
from t2t_keras.layers.relative_attention import RelativeMultiHeadAttention
from t2t_keras.layers.rotary_attention import RotaryMultiHeadAttention

__all__ = ["masks", "DecoderLayer", "TransformerDecoder", "Dense",
           "ScaledDotProductAttention", "Dropout", "TokenEmbedding",
           "EncoderLayer", "TransformerEncoder", "PositionwiseFeedForward",
           "LayerNormalization", "MultiHeadAttention",
           "LearnedPositionalEmbedding", "SinusoidalPositionalEncoding",
           "sinusoid", "RelativeMultiHeadAttention", "RotaryMultiHeadAttention"]
