"""The contract every registered model keeps.

Training, beam search, greedy search, ``t2t-decoder`` and ``t2t-exporter``
use a model only through this class, so a model that implements it trains,
decodes and exports through the same commands.

A model is built as ``cls(hparams, input_vocab_size, target_vocab_size)``
and maps ``{"inputs": int [batch, source_length], "targets": int [batch,
target_length]}`` (0-padded, EOS-terminated) to float32 logits [batch,
target_length, target_vocab_size], position t predicting targets[:, t]
(training and scoring). Incremental decoding is four methods::

    state = model.encode(inputs)                       # once per batch
    cache = model.init_cache(state, max_length)        # once per batch
    logits, cache = model.decode_step(ids, step, cache)   # step = 0, 1, ...
    cache = model.reorder_cache(cache, indices)        # beam search only

The searches decode a model prepared for decoding
(``models.prepared.prepare_for_decoding``): the same contract, its faster
products made once.
``attention_layers()`` (optional) names the attention layers for
inspection; ``training_logits(features)`` (optional) is what the training
loss takes.

``state`` and ``cache`` are nested structures (dicts, lists, tuples) of
tensors whose first axis is the batch: beam search repeats each row of
``state`` once per beam, and a cache row belongs to one hypothesis (a model
that overrides ``reorder_cache`` may also keep tensors of other shapes in
its cache, computed once a batch, that its ``reorder_cache`` leaves alone).
Cache tensors keep their shapes, structure and dtypes from step to step (the
Transformer's self-attention keys and values are allocated at
``max_length`` positions and written one a step): the searches run in a
loop that exports to TF Serving and compiles with XLA and ``jax.jit``.
"""

import keras
from keras import ops

from t2t_keras.errors import UserError

# What ``attention_layers`` may return, in the paper's order (section 3.2.3).
ATTENTION_KINDS = ("encoder_self", "decoder_self", "encoder_decoder")


class Seq2SeqModel(keras.Model):
  """Base class of registered models; see the module docstring.

  Subclasses implement ``call``, ``encode``, ``init_cache`` and
  ``decode_step``; ``reorder_cache`` gathers every cache tensor unless a
  subclass knows which parts differ between hypotheses.
  """

  def training_logits(self, features):
    """The logits the training loss takes: ``self(features, training=True)``
    unless a model returns them in its compute dtype instead of float32 (the
    loss computes in float32 either way; under mixed precision this skips a
    cast of the [tokens, vocab] logits forward and back)."""
    return self(features, training=True)

  def encode(self, inputs, training=None):
    """inputs int [batch, source_length] -> the encoder state (a nest of
    [batch, ...] tensors) that ``init_cache`` takes."""
    raise NotImplementedError

  def init_cache(self, state, max_length):
    """The decoding state before step 0, for outputs of at most
    ``max_length`` tokens (a scalar int, may be a tensor)."""
    raise NotImplementedError

  def decode_step(self, ids, step, cache):
    """One decoding step.

    Args:
      ids: int [batch], the token at position ``step - 1`` (0 at step 0).
      step: scalar int.
      cache: from ``init_cache`` or the previous step.
    Returns:
      (float32 logits [batch, target_vocab_size] for position ``step``,
      the new cache).
    """
    raise NotImplementedError

  def reorder_cache(self, cache, indices):
    """The cache whose row i is row ``indices[i]`` of ``cache``.

    Args:
      cache: from ``init_cache`` or ``decode_step``.
      indices: int [rows], the hypothesis each new row continues. Beam
        search only mixes rows of one source sentence (its beams), so parts
        of the cache computed from the source alone may stay as they are.
    """
    return keras.tree.map_structure(lambda t: ops.take(t, indices, axis=0),
                                    cache)

  def attention_layers(self):
    """For inspection (t2t-attention): {kind: [attention layer per layer,
    bottom first]} with kinds among ``ATTENTION_KINDS``; each layer is a
    ``layers.MultiHeadAttention`` (or subclass) that the full pass calls
    once. Optional: a model without it cannot be inspected."""
    raise UserError(f"model {type(self).__name__} does not say which of its "
                    "layers are attention layers (attention_layers)")

  def build(self, features_shape=None):
    """Creates every weight by running a tiny example through the model."""
    del features_shape
    ids = ops.ones((1, 2), "int32")
    self.call({"inputs": ids, "targets": ids})
    self.built = True
