"""The Transformer of "Attention Is All You Need" as a Keras model.

Token ids follow tensor2tensor (``t2t_keras.ids``): 0 is padding (and the
decoder's start symbol, since targets are shifted right by one position), 1
is EOS.

A variant changes a part, not the model: ``config_class`` adds hparams, and
``stack_options`` chooses the layers' parts (attention, feed-forward,
positions; see ``layers.spec``). ``transformer_relative`` is the example.
"""

import keras
from keras import ops

from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.ids import PAD_ID
from t2t_keras.layers import masks
from t2t_keras.layers.decoder import TransformerDecoder
from t2t_keras.layers.embedding import TokenEmbedding
from t2t_keras.layers.encoder import TransformerEncoder
from t2t_keras.models import incremental
from t2t_keras.models.base import Seq2SeqModel
from t2t_keras.models.config import TransformerConfig


PLAIN = incremental.Products()   # the layers' own products


def shift_right(targets):
  """[batch, length] ids -> the decoder input: 0 (start), then targets[:-1]."""
  return ops.pad(targets, ((0, 0), (1, 0)))[:, :-1]


@registry.register_model("transformer")
@keras.saving.register_keras_serializable(package="t2t_keras")
class Transformer(Seq2SeqModel):
  """Encoder-decoder Transformer.

  Args:
    hparams: an HParams (or its ``values()`` dict) with the keys used by
      ``config_class``.
    input_vocab_size, target_vocab_size: sizes of the id spaces; they must
      be equal when embeddings are shared.

  Call args:
    features: dict with ``inputs`` int [batch, source_length] and
      ``targets`` int [batch, target_length], 0-padded.
    float32_logits: False returns the logits in the compute dtype.
  Returns:
    logits [batch, target_length, target_vocab_size], float32 by default;
    position t predicts targets[:, t] from inputs and targets[:, :t].
  """

  config_class = TransformerConfig
  # The class of the embeddings and pre-softmax matrix (a variant's own).
  embedding_class = TokenEmbedding

  def __init__(self, hparams, input_vocab_size, target_vocab_size=None,
               **kwargs):
    super().__init__(**kwargs)
    self.config = self.config_class.from_hparams(hparams)
    self.input_vocab_size = int(input_vocab_size)
    self.target_vocab_size = int(target_vocab_size or input_vocab_size)
    c = self.config
    if c.shared_embedding and self.input_vocab_size != self.target_vocab_size:
      raise UserError(
          "shared_embedding=True needs one vocabulary, got input_vocab_size="
          f"{self.input_vocab_size} and target_vocab_size="
          f"{self.target_vocab_size}; set shared_embedding=False")
    policy = self.dtype_policy
    embedding = self.embedding_class
    self.target_embedding = embedding(
        self.target_vocab_size, c.hidden_size, dtype=policy,
        name="target_embedding")
    self.input_embedding = (
        self.target_embedding if c.shared_embedding else embedding(
            self.input_vocab_size, c.hidden_size, dtype=policy,
            name="input_embedding"))
    self.softmax_weights = (
        self.target_embedding if c.shared_embedding_and_softmax_weights
        else embedding(self.target_vocab_size, c.hidden_size,
                       dtype=policy, name="softmax"))
    options = self.stack_options()
    self.encoder = TransformerEncoder(c.num_encoder_layers, name="encoder",
                                      dtype=policy, **options)
    self.decoder = TransformerDecoder(c.num_decoder_layers, name="decoder",
                                      dtype=policy, **options)

  def stack_options(self):
    """The encoder's and decoder's arguments (see ``layers.stack.Stack``);
    variants add layer specs here."""
    c = self.config
    return dict(num_heads=c.num_heads, key_size=c.key_size,
                value_size=c.value_size, filter_size=c.filter_size,
                attention_dropout=c.attention_dropout,
                relu_dropout=c.relu_dropout, dropout=c.dropout,
                norm_position=c.norm_position, pos=c.pos,
                max_length=c.max_positions)

  # -- full pass ------------------------------------------------------------
  def encode(self, inputs, training=None):
    """inputs int [batch, source_length] -> (memory [batch, source_length,
    d_model], memory_bias [batch, 1, 1, source_length])."""
    bias = masks.padding_bias(inputs, PAD_ID)
    memory = self.encoder(self.input_embedding(inputs), bias=bias,
                          training=training)
    return memory, bias

  def decode_hidden(self, targets, memory, memory_bias, training=None):
    """targets int [batch, length] -> the decoder's output [batch, length,
    d_model], the input of the pre-softmax projection."""
    x = self.target_embedding(shift_right(targets))
    return self.decoder(x, memory, memory_bias=memory_bias,
                        training=training)

  def hidden(self, features, training=None):
    """features -> the decoder's output [batch, length, d_model] (the full
    pass up to the pre-softmax projection); a variant whose decoder input
    depends on more than the targets overrides this."""
    memory, bias = self.encode(features["inputs"], training=training)
    return self.decode_hidden(features["targets"], memory, bias,
                              training=training)

  def call(self, features, training=None, float32_logits=True):
    return self.softmax_weights(self.hidden(features, training=training),
                                reverse=True, float32=float32_logits)

  def training_logits(self, features):
    """Logits in the compute dtype: under mixed bfloat16 the loss reads
    [tokens, vocab] bfloat16 logits and writes their bfloat16 gradient, with
    no float32 copy either way."""
    return self(features, training=True, float32_logits=False)

  # -- incremental decoding (the contract of models.base) -------------------
  def init_cache(self, state, max_length):
    """Encoder-decoder keys and values, self-attention caches of
    ``max_length`` positions (``models.incremental``) and the source
    padding bias."""
    memory, memory_bias = state
    return {"layers": incremental.init_caches(self.decoder, memory,
                                              max_length),
            "memory_bias": memory_bias}

  def embed_step(self, ids, cache):
    """The decoder input of one step: ids int [batch] -> ([batch, 1,
    d_model], the cache); a variant that adds to it overrides this."""
    return self.target_embedding(ops.reshape(ids, (-1, 1))), cache

  def decode_step(self, ids, step, cache, products=PLAIN):
    """The contract's step; ``products``: how it multiplies by the weights
    (``incremental.Products``; a prepared model passes its own)."""
    x, cache = self.embed_step(ids, cache)
    x, layers = incremental.decoder_step(self.decoder, x, step,
                                         cache["layers"],
                                         cache["memory_bias"], products)
    logits = products.logits(self.softmax_weights, x)[:, 0]
    return logits, dict(cache, layers=layers)

  def reorder_cache(self, cache, indices):
    """Only the self-attention caches differ between hypotheses (the rest
    comes from the source sentence)."""
    return dict(cache, layers=incremental.reorder_caches(cache["layers"],
                                                         indices))

  def attention_layers(self):
    """The three kinds of attention of section 3.2.3, per layer."""
    encoder, decoder = self.encoder.blocks, self.decoder.blocks
    return {"encoder_self": [b.self_attention for b in encoder],
            "decoder_self": [b.self_attention for b in decoder],
            "encoder_decoder": [b.cross_attention for b in decoder]}

  def get_config(self):
    return {"hparams": self.config.to_dict(),
            "input_vocab_size": self.input_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "name": self.name}
