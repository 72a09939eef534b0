"""The Transformer of "Attention Is All You Need" as a Keras model.

Token ids follow tensor2tensor: 0 is padding (and the decoder's start symbol,
since targets are shifted right by one position), 1 is EOS.
"""

import keras
from keras import ops

from t2t_keras import registry
from t2t_keras.layers import masks
from t2t_keras.layers.decoder import TransformerDecoder
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.encoder import TransformerEncoder
from t2t_keras.models.config import TransformerConfig

PAD_ID = 0
EOS_ID = 1


def shift_right(targets):
  """[batch, length] ids -> the decoder input: 0 (start), then targets[:-1]."""
  return ops.pad(targets, ((0, 0), (1, 0)))[:, :-1]


@registry.register_model("transformer")
@keras.saving.register_keras_serializable(package="t2t_keras")
class Transformer(keras.Model):
  """Encoder-decoder Transformer.

  Args:
    hparams: an HParams (or its ``values()`` dict) with the keys used by
      ``TransformerConfig``.
    input_vocab_size, target_vocab_size: sizes of the id spaces; they must
      be equal when embeddings are shared.

  Call args:
    features: dict with ``inputs`` int [batch, source_length] and
      ``targets`` int [batch, target_length], 0-padded.
  Returns:
    float32 logits [batch, target_length, target_vocab_size]; position t
    predicts targets[:, t] from inputs and targets[:, :t].
  """

  def __init__(self, hparams, input_vocab_size, target_vocab_size=None,
               **kwargs):
    super().__init__(**kwargs)
    self.config = TransformerConfig.from_hparams(hparams)
    self.input_vocab_size = int(input_vocab_size)
    self.target_vocab_size = int(target_vocab_size or input_vocab_size)
    c = self.config
    if c.shared_embedding and self.input_vocab_size != self.target_vocab_size:
      raise ValueError(
          "shared_embedding=True needs one vocabulary, got input_vocab_size="
          f"{self.input_vocab_size} and target_vocab_size="
          f"{self.target_vocab_size}; set shared_embedding=False")
    policy = self.dtype_policy
    self.target_embedding = TokenEmbedding(
        self.target_vocab_size, c.hidden_size, dtype=policy,
        name="target_embedding")
    self.input_embedding = (
        self.target_embedding if c.shared_embedding else TokenEmbedding(
            self.input_vocab_size, c.hidden_size, dtype=policy,
            name="input_embedding"))
    self.softmax_weights = (
        self.target_embedding if c.shared_embedding_and_softmax_weights
        else TokenEmbedding(self.target_vocab_size, c.hidden_size,
                            dtype=policy, name="softmax"))
    stack = dict(num_heads=c.num_heads, key_size=c.key_size,
                 value_size=c.value_size, filter_size=c.filter_size,
                 attention_dropout=c.attention_dropout,
                 relu_dropout=c.relu_dropout, dropout=c.dropout,
                 norm_position=c.norm_position, pos=c.pos,
                 max_length=c.max_positions, dtype=policy)
    self.encoder = TransformerEncoder(c.num_encoder_layers, name="encoder",
                                      **stack)
    self.decoder = TransformerDecoder(c.num_decoder_layers, name="decoder",
                                      **stack)

  def build(self, features_shape=None):
    """Creates every weight by running a tiny example through the model."""
    ids = ops.ones((1, 2), "int32")
    self.call({"inputs": ids, "targets": ids})
    self.built = True

  # -- full pass ------------------------------------------------------------
  def encode(self, inputs, training=None):
    """inputs int [batch, source_length] -> (memory [batch, source_length,
    d_model], memory_bias [batch, 1, 1, source_length])."""
    bias = masks.padding_bias(inputs, PAD_ID)
    memory = self.encoder(self.input_embedding(inputs), bias=bias,
                          training=training)
    return memory, bias

  def decode(self, targets, memory, memory_bias, training=None):
    """targets int [batch, length] -> float32 logits [batch, length, vocab]."""
    x = self.target_embedding(shift_right(targets))
    x = self.decoder(x, memory, memory_bias=memory_bias, training=training)
    return self.softmax_weights(x, reverse=True)

  def call(self, features, training=None):
    memory, bias = self.encode(features["inputs"], training=training)
    return self.decode(features["targets"], memory, bias, training=training)

  # -- incremental decoding ---------------------------------------------------
  def init_cache(self, memory, memory_bias, max_length):
    """The state for ``decode_step``: encoder-decoder keys and values,
    empty self-attention caches of ``max_length`` steps, and the bias."""
    return {"layers": self.decoder.init_cache(memory, max_length),
            "memory_bias": memory_bias}

  def decode_step(self, ids, step, cache):
    """One decoding step.

    Args:
      ids: int [batch], the token at position ``step - 1`` (0 at step 0).
      step: scalar int.
      cache: from ``init_cache`` or the previous step.
    Returns:
      (float32 logits [batch, vocab] for position ``step``, new cache).
    """
    x = self.target_embedding(ops.reshape(ids, (-1, 1)))
    x, layers = self.decoder.step(x, step, cache["layers"],
                                  memory_bias=cache["memory_bias"])
    logits = self.softmax_weights(x, reverse=True)[:, 0]
    return logits, {"layers": layers, "memory_bias": cache["memory_bias"]}

  def get_config(self):
    return {"hparams": self.config.to_dict(),
            "input_vocab_size": self.input_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "name": self.name}
