"""The Transformer whose decoder is told which source token comes next:
for outputs that copy the source in order between tokens of their own, as
parsing's linearized trees copy the words between brackets.

Each decoder input gets, added to its embedding, a learned projection of
the encoder's output at the *next uncopied* source position: the number of
source tokens copied so far, where a copied token is a decoder input that
occurs in its source sentence (neither padding nor EOS; parsing's bracket
tokens never occur in a sentence). Once everything is copied the pointer
rests on the source's last real token (its EOS). In a linearized tree the
decoder otherwise has to find its place by attention alone, and the
dominant errors of long sentences are losing it (docs/recipes.md).

For position t of the decoder input y (y_0 = 0, y_t = targets[t-1])::

    p_t  = min(#{j <= t : y_j copied}, the last real source position)
    x_t  = Embedding(y_t) + W_p memory[p_t]

The rest is the Transformer. Incremental decoding keeps the count in the
cache (a hypothesis' own, reordered with it by beam search). On the WSJ
sample it learns the copying at once but parses worse than the Transformer
from step 3,000 on (flatter trees), so recipes/parsing_wsj.sh keeps the
Transformer (MODEL=transformer_pointer runs it; docs/recipes.md).
"""

import keras
from keras import ops

from t2t_keras import registry
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers.dense import Dense
from t2t_keras.models.transformer import Transformer, shift_right


def copied(ids, inputs):
  """ids int [batch, length], inputs int [batch, source_length] -> bool
  [batch, length]: which ids occur in their row of ``inputs`` (PAD and EOS
  never count)."""
  found = ops.any(ops.equal(ids[:, :, None], inputs[:, None, :]), axis=-1)
  return ops.logical_and(found, ids > max(PAD_ID, EOS_ID))


def last_position(inputs):
  """inputs int [batch, source_length] -> int [batch]: the index of each
  row's last real (non-padding) token, 0 for an empty row."""
  real = ops.sum(ops.cast(ops.not_equal(inputs, PAD_ID), "int32"), axis=1)
  return ops.maximum(real - 1, 0)


def pointer_positions(previous, inputs):
  """previous int [batch, length] (the decoder inputs, shifted targets) and
  inputs int [batch, source_length] -> int [batch, length]: p_t, the source
  position of the next token to copy at each decoder position."""
  count = ops.cumsum(ops.cast(copied(previous, inputs), "int32"), axis=1)
  return ops.minimum(count, last_position(inputs)[:, None])


def at_positions(memory, positions):
  """memory [batch, source_length, d_model], positions int [batch, length]
  -> [batch, length, d_model]: memory[b, positions[b, t]] (a one-hot
  product: its gradient reaches the encoder, and it exports as MatMul)."""
  select = ops.one_hot(positions, ops.shape(memory)[1], dtype=memory.dtype)
  return ops.einsum("bts,bsd->btd", select, memory)


@registry.register_model("transformer_pointer")
@keras.saving.register_keras_serializable(package="t2t_keras")
class TransformerPointer(Transformer):
  """As ``Transformer``; each decoder input also carries the encoder
  output at the next uncopied source position (module docstring).

  ``encode`` returns (memory, memory_bias, inputs int [batch,
  source_length]): the decoder needs the source ids to count copies.
  """

  def __init__(self, hparams, input_vocab_size, target_vocab_size=None,
               **kwargs):
    super().__init__(hparams, input_vocab_size, target_vocab_size, **kwargs)
    self.pointer = Dense(self.config.hidden_size, use_bias=False,
                         dtype=self.dtype_policy, name="pointer")

  def encode(self, inputs, training=None):
    memory, bias = super().encode(inputs, training=training)
    return memory, bias, ops.cast(inputs, "int32")

  def hidden(self, features, training=None):
    """The decoder's output [batch, length, d_model]: each decoder input is
    the embedding plus the pointer's term at the next word to copy."""
    memory, bias, inputs = self.encode(features["inputs"], training=training)
    previous = shift_right(ops.cast(features["targets"], "int32"))
    positions = pointer_positions(previous, inputs)
    x = self.target_embedding(previous) + self.pointer(
        at_positions(memory, positions), training=training)
    return self.decoder(x, memory, memory_bias=bias, training=training)

  def init_cache(self, state, max_length):
    """The Transformer's cache, plus the source (ids, encoder output, last
    real position: the same for every beam of a sentence) and each
    hypothesis' count of copied tokens (int [rows])."""
    memory, memory_bias, inputs = state
    cache = super().init_cache((memory, memory_bias), max_length)
    return dict(cache, memory=memory, source=inputs,
                last=last_position(inputs),
                copied=ops.zeros((ops.shape(inputs)[0],), "int32"))

  def embed_step(self, ids, cache):
    """The embedded ids plus the pointer's term; the cache's count of
    copies moves on past ``ids`` (int [rows])."""
    ids = ops.reshape(ops.cast(ids, "int32"), (-1, 1))
    count = cache["copied"] + ops.cast(copied(ids, cache["source"])[:, 0],
                                       "int32")
    position = ops.minimum(count, cache["last"])
    x = self.target_embedding(ids) + self.pointer(
        at_positions(cache["memory"], position[:, None]))
    return x, dict(cache, copied=count)

  def reorder_cache(self, cache, indices):
    """The Transformer's reordering, and each row's count of copies (the
    source parts are the same for every beam of a sentence)."""
    cache = super().reorder_cache(cache, indices)
    return dict(cache, copied=ops.take(cache["copied"], indices, axis=0))
