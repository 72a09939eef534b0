"""Decoding's cache write in place (TensorFlow graphs): the fast path of
``layers.multi_head_attention.write_at``.

The plain write is a select over the whole self-attention cache (a new
[batch, heads, max_length, depth] tensor each layer, each step). A search
loop owns its cache, so here the write is ``InplaceUpdate`` of the rows
``(b * heads + h) * max_length + index`` of the cache seen as [batch *
heads * max_length, depth]: one pass over the update, not the cache; the
values are the select's. ``InplaceUpdate`` writes its input's buffer
whoever else holds it, so it runs only inside ``owned_cache_writes``
(``decoding.steps.search_loop``), on caches made ``fresh`` (their own
buffers, read by nothing after the step that writes them). XLA has no kernel for ``InplaceUpdate`` or ``DeepCopy``: inside
``xla_cache_writes`` (``decoding.xla``) the write stays the select, which
XLA updates in place itself.
"""

import contextlib
import threading

from t2t_keras import kernels

_WRITES = threading.local()


def in_place():
  """Whether a cache write traced now is this module's."""
  return (kernels.enabled() and getattr(_WRITES, "owned", False)
          and not getattr(_WRITES, "xla", False))


@contextlib.contextmanager
def owned_cache_writes():
  """Within it (a search loop tracing its steps), cache writes are in
  place where ``kernels.enabled()``."""
  before = getattr(_WRITES, "owned", False)
  _WRITES.owned = True
  try:
    yield
  finally:
    _WRITES.owned = before


def fresh(t):
  """An empty cache tensor ``t`` as a buffer of its own (``DeepCopy``,
  once a batch) where steps may write it in place: a fill of zeros may be
  one buffer for every layer's keys and values (the graph rewriter merges
  equal ops) or a constant kept between calls."""
  if not kernels.enabled() or getattr(_WRITES, "xla", False):
    return t
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.raw_ops.DeepCopy(x=t)


@contextlib.contextmanager
def xla_cache_writes():
  """Within it (a search XLA compiles), cache writes are selects, even
  inside ``owned_cache_writes``."""
  before = getattr(_WRITES, "xla", False)
  _WRITES.xla = True
  try:
    yield
  finally:
    _WRITES.xla = before


def write_in_place(cache, update, index):
  """``cache`` [batch, heads, max_length, depth] with ``update`` [batch,
  heads, 1, depth] (its dtype) written at position ``index`` (scalar int32),
  in ``cache``'s buffer: same shape."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  depth = cache.shape[-1]
  length = cache.shape[2] or tf.shape(cache)[2]
  rows = tf.reshape(cache, (-1, depth))
  written = tf.raw_ops.InplaceUpdate(
      x=rows, i=tf.range(index, tf.shape(rows)[0], length),
      v=tf.reshape(update, (-1, depth)))
  return tf.reshape(written, tf.shape(cache))
