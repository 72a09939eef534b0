"""The few tensor operations the searches take from their backend itself,
where ``keras.ops`` has no form or a slower one; everything else in the
searches is ``keras.ops``, so one search runs as a TensorFlow graph (which
exports to stock TF Serving), under ``tf.function(jit_compile=True)`` and
under ``jax.jit``.

* ``search_loop``: TensorFlow's while loop with the batch axis left free
  in every loop variable (the model's ops need not keep it static), JAX's
  ``lax.while_loop`` (every shape static).
* ``gather_rows``: a gather along axis 1 with a batch of indices a row
  (``tf.gather(batch_dims=1)``: one op, where ``ops.take_along_axis``
  builds a dozen with int64 casts on TensorFlow).
* ``take``: a gather of in-range indices (``ops.take`` also mends negative
  ones, three more ops a call).
* ``argmax``: the index of each row's largest entry, int32 (``ops.argmax``
  adds a negative-zero fix-up, five ops a step).
* ``categorical``: one stateless draw a row, seeded by (seed, step):
  ``tf.random.stateless_categorical``, or ``jax.random.categorical`` with
  the key folded with the step (the two backends draw different streams;
  each gives the same outputs for the same seed and batch).

The backend is Keras's (``KERAS_BACKEND``); neither import happens under
the other backend, so the JAX path never imports TensorFlow.
"""

import keras

BACKEND = keras.backend.backend()

if BACKEND == "tensorflow":
  import tensorflow as tf

  def _invariant(t, free):
    """The shape of loop variable ``t`` with its first ``free`` axes free."""
    dims = t.shape.as_list()
    free = min(free, len(dims))
    return tf.TensorShape([None] * free + dims[free:])

  def search_loop(cond, body, start):
    """``while cond(*vars): vars = body(*vars)`` from ``start`` (a tuple of
    nests of tensors); returns the last vars. Every loop variable keeps its
    shape, dtype and structure, but for its first (batch) axis."""
    invariants = tuple(tf.nest.map_structure(lambda t: _invariant(t, 1), x)
                       for x in start)
    return tf.while_loop(cond, body, start, shape_invariants=invariants)

  def gather_rows(x, indices):
    """x [batch, n, ...], indices int [batch, k] (or [batch]) -> [batch, k,
    ...] (or [batch, ...]): row b of the result is x[b, indices[b]]."""
    return tf.gather(x, indices, batch_dims=1)

  def take(x, indices, axis=0):
    """``x`` gathered at ``indices`` (each in range) along ``axis``."""
    return tf.gather(x, indices, axis=axis)

  def argmax(x):
    """int32 [rows]: each row's largest entry's index in ``x`` [rows, n]."""
    return tf.argmax(x, -1, output_type=tf.int32)

  def categorical(logits, seed, step):
    """int32 [batch]: a draw a row of ``logits`` [batch, vocab], seeded by
    the Python int ``seed`` and the scalar int ``step``."""
    seeds = tf.stack([tf.constant(seed, tf.int32), tf.cast(step, tf.int32)])
    return tf.random.stateless_categorical(logits, 1, seed=seeds,
                                           dtype=tf.int32)[:, 0]

elif BACKEND == "jax":
  import jax
  import jax.numpy as jnp

  def search_loop(cond, body, start):
    """As the TensorFlow form: ``jax.lax.while_loop`` (static shapes)."""
    return jax.lax.while_loop(lambda v: cond(*v), lambda v: tuple(body(*v)),
                              tuple(start))

  def gather_rows(x, indices):
    """As the TensorFlow form."""
    return jax.vmap(lambda row, index: jnp.take(row, index, axis=0))(
        x, indices)

  def take(x, indices, axis=0):
    """As the TensorFlow form."""
    return jnp.take(x, indices, axis=axis)

  def argmax(x):
    """As the TensorFlow form."""
    return jnp.argmax(x, axis=-1).astype(jnp.int32)

  def categorical(logits, seed, step):
    """As the TensorFlow form (another random stream)."""
    key = jax.random.fold_in(jax.random.PRNGKey(seed), step)
    return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)

else:
  raise ImportError(f"t2t_keras's searches run on the tensorflow and jax "
                    f"backends of Keras, not {BACKEND!r} (KERAS_BACKEND)")
