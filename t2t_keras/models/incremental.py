"""Incremental decoding of the Transformer's decoder: its sub-layers a
position at a time, over a cache of fixed shape.

The cache of decoder self-attention (flax's ``cache_index``, keras-hub's
``CachedMultiHeadAttention``): keys and values are allocated once at the
output limit, step t writes its key and value at position t, and the
positions after t are masked out of step t's attention. Every step's
tensors have the same shapes, so a decoding loop compiles with XLA and
``jax.jit``. Only core ops are used on TensorFlow (a select, not XLA's
dynamic-update-slice), so the loop exports to stock TF Serving. The
encoder-decoder keys and values are computed once a batch.

A step runs the block's own wiring (``DecoderLayer.wire``) with
sub-layers made of the layers' own parts (``MultiHeadAttention.queries``,
``positioned``, ``attention_terms``, ``attend``, ``merge_heads``), so each
step equals the full pass at its position. How it multiplies by the weights is a ``Products`` object:
the layers' own here (the training model's ``decode_step``); a model
prepared for decoding (``models.prepared``) passes faster ones.
"""

import collections

import keras
from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.layers.decoder import DecoderLayer
from t2t_keras.layers.feed_forward import PositionwiseFeedForward
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.layers.multi_head_attention import MultiHeadAttention
from t2t_keras.layers.rows import apply_to_rows


class DecodingStep(collections.namedtuple("DecodingStep",
                                          ("index", "here", "bias"))):
  """A decoding step's position with what each self-attention layer needs
  from it, made once a step (``decoding_step``) and shared by the layers.

  Fields:
    index: scalar int, the position decoded.
    here: bool [1, 1, max_length, 1], True at ``index``: where the step's
      key and value are written.
    bias: [1, 1, 1, max_length] additive mask: 0 for the keys at positions
      0..index, NEG_INF after (not yet decoded).
  """


def decoding_step(index, max_length):
  """The ``DecodingStep`` of position ``index`` (scalar int) of a cache of
  ``max_length`` positions."""
  index = ops.convert_to_tensor(index, "int32")
  positions = ops.arange(max_length)
  here = ops.reshape(ops.equal(positions, index), (1, 1, -1, 1))
  bias = ops.where(ops.greater(positions, index), NEG_INF, 0.0)
  return DecodingStep(index, here, ops.reshape(bias, (1, 1, 1, -1)))


def write_at(cache, update, step):
  """``cache`` [batch, heads, max_length, depth] with ``update`` [batch,
  heads, 1, depth] written at ``step`` (a ``DecodingStep``): same shape.
  On JAX a dynamic-update-slice (in place under ``jax.jit``); on
  TensorFlow a select, which XLA fuses and stock TF Serving runs."""
  update = ops.cast(update, cache.dtype)
  if keras.backend.backend() == "jax":
    return ops.slice_update(cache, (0, 0, step.index, 0), update)
  return ops.where(step.here, update, cache)


class Products:
  """How a step multiplies by the weights: here as the layers do."""

  def dense(self, layer):
    """x [rows, d_in] -> x W + b (and the layer's activation) for a
    ``Dense`` ``layer``: the layer itself."""
    return layer

  def stacked(self, attention):
    """x [batch, 1, d_model] -> x [W^Q W^K W^V] + [b^Q b^K b^V], [batch, 1,
    h (2 d_k + d_v)], for a self-attention layer, or None (three
    products)."""
    del attention
    return None

  def attend(self, attention, queries, keys, values, bias, extra_logits,
             extra_values):
    """Equation (1) for a query of one position: [batch, h, 1, d_v]."""
    return attention.attend(queries, keys, values, bias, extra_logits,
                            extra_values)[0]

  def logits(self, embedding, x):
    """The pre-softmax product of ``x`` [batch, 1, d_model]: float32
    [batch, 1, vocab]."""
    return embedding(x, reverse=True)


def _stepped(layer, kind, base):
  """``layer`` where a step can walk it: an instance of ``base`` that keeps
  its ``call``; else a one-line error."""
  if isinstance(layer, base) and type(layer).call is base.call:
    return layer
  raise UserError(f"incremental decoding cannot step the {kind} "
                  f"{type(layer).__name__}: it walks {base.__name__}'s parts "
                  "and this class has a call of its own; write its variant "
                  "through the hooks (a decoder layer's wire) instead")


def init_caches(decoder, memory, max_length):
  """Per decoder layer: a self-attention cache of zeros, ``key`` [batch, h,
  max_length, d_k] and ``value`` [batch, h, max_length, d_v], and the
  encoder-decoder keys and values of ``memory`` [batch, source_length,
  d_model], computed once."""
  batch = ops.shape(memory)[0]
  caches = []
  for block in decoder.blocks:
    attention = block.self_attention
    shape = (batch, attention.num_heads, max_length)
    dtype = attention.compute_dtype
    caches.append({
        "self": {"key": ops.zeros(shape + (attention.key_size,), dtype),
                 "value": ops.zeros(shape + (attention.value_size,), dtype)},
        "cross": block.cross_attention.keys_values(memory, 0)})
  return caches


def reorder_caches(caches, indices):
  """The caches with their self-attention entries gathered: row i is row
  ``indices[i]`` (int [rows]). The encoder-decoder keys and values are the
  same for every beam of a sentence, so they are not copied."""
  return [dict(cache, self={name: ops.take(t, indices, axis=0)
                            for name, t in cache["self"].items()})
          for cache in caches]


def decoder_step(decoder, x, step, caches, memory_bias, products):
  """One step of the decoder stack: ``x`` [batch, 1, d_model], the embedded
  previous token at position ``step`` (scalar int) -> ([batch, 1,
  d_model], the updated caches)."""
  x = decoder.embed_positions(x, offset=step)
  keys = caches[0]["self"]["key"]      # [batch, h, max_length, d_k]
  # The step's write position and mask, once for every layer.
  step = decoding_step(step, keys.shape[2] or ops.shape(keys)[2])
  updated = []
  for block, cache in zip(decoder.blocks, caches):
    block = _stepped(block, "decoder layer", DecoderLayer)
    written = {}

    def self_attend(query, block=block, cache=cache, written=written):
      y, written["self"] = self_attention_step(
          block.self_attention, query, step, cache["self"], products)
      return y

    x = block.wire(
        x, self_attend,
        lambda query, block=block, cache=cache: cross_attention_step(
            block.cross_attention, query, cache["cross"], memory_bias,
            products),
        lambda hidden, block=block: feed_forward_step(
            block.feed_forward, hidden, products), False)
    updated.append(dict(cache, self=written["self"]))
  return decoder.finish(x), updated


def _step_heads(layer, query, products):
  """The step's query, key and value by head, before ``positioned``:
  [batch, h, 1, d_k], [batch, h, 1, d_k], [batch, h, 1, d_v]."""
  h, dk, dv = layer.num_heads, layer.key_size, layer.value_size
  stacked = products.stacked(layer)
  if stacked is not None:
    q, k, v = ops.split(stacked(query), (h * dk, 2 * h * dk), axis=-1)
    return (ops.reshape(q, (-1, h, 1, dk)), ops.reshape(k, (-1, h, 1, dk)),
            ops.reshape(v, (-1, h, 1, dv)))
  maps = layer.projections()
  return tuple(layer.project_heads(products.dense(maps[name]), query, depth)
               for name, depth in (("query", dk), ("key", dk),
                                   ("value", dv)))


def self_attention_step(layer, query, step, cache, products):
  """Masked self-attention of one position: ``query`` [batch, 1, d_model]
  at ``step`` (a ``DecodingStep``) over ``cache`` -> ([batch, 1, d_model],
  the cache with the step's key and value written)."""
  layer = _stepped(layer, "self-attention", MultiHeadAttention)
  q, k, v = _step_heads(layer, query, products)
  q = layer.positioned("query", q, step.index)
  new = {"key": layer.positioned("key", k, step.index), "value": v}
  cache = {name: write_at(cache[name], new[name], step)
           for name in ("key", "value")}
  extra_logits, extra_values = layer.attention_terms(q, cache["key"],
                                                     step.index)
  context = products.attend(layer, q, cache["key"], cache["value"],
                            step.bias, extra_logits, extra_values)
  output = products.dense(layer.projections()["output"])
  return layer.merge_heads(context, output), cache


def cross_attention_step(layer, query, memory, bias, products):
  """Encoder-decoder attention of one position: ``query`` [batch, 1,
  d_model] over ``memory``'s keys and values (from ``init_caches``) with
  the source padding ``bias`` -> [batch, 1, d_model]."""
  layer = _stepped(layer, "encoder-decoder attention", MultiHeadAttention)
  maps = layer.projections()
  q = layer.positioned("query", layer.project_heads(
      products.dense(maps["query"]), query, layer.key_size), 0)
  context = products.attend(layer, q, memory["key"], memory["value"], bias,
                            None, None)
  return layer.merge_heads(context, products.dense(maps["output"]))


def feed_forward_step(layer, x, products):
  """The feed-forward sub-layer of ``x`` [batch, 1, d_model]: equation (2)
  through ``products`` for ``PositionwiseFeedForward``, another class's own
  call otherwise (position-wise, it needs no cache)."""
  if not (isinstance(layer, PositionwiseFeedForward) and
          type(layer).call is PositionwiseFeedForward.call):
    return layer(x)
  inner, outer = layer.linear_maps()
  hidden = apply_to_rows(products.dense(inner), x)
  return apply_to_rows(products.dense(outer), hidden)
