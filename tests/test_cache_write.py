"""kernels.cache_write: a search loop writes its decoding cache in place
(InplaceUpdate), with the ids of the plain select; a call outside a search
loop, and an XLA search, keep the select."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_keras import registry
from t2t_keras.decoding.beam_search import beam_search
from t2t_keras.decoding.constraints import PrefixConstraint
from t2t_keras.decoding.token_by_token import greedy_decode

VOCAB = 40


def _model(name="transformer"):
  hparams = registry.hparams("transformer_tiny")
  hparams.parse("num_hidden_layers=2,hidden_size=32,filter_size=64,"
                "num_heads=4")
  tf.keras.utils.set_random_seed(3)
  model = registry.lookup("model", name)(hparams, VOCAB)
  model.build()
  return model


def _inputs():
  ids = np.random.RandomState(2).randint(2, VOCAB, size=(4, 6))
  ids[:, -1] = 1
  ids[2, 2], ids[2, 3:] = 1, 0
  return tf.constant(ids, tf.int32)


SEARCHES = {
    "beam n-best": lambda m, x: beam_search(m, x, 3, 0.6, 7, nbest=True),
    "greedy": lambda m, x: greedy_decode(m, x, 7),
    "beam, prefixes": lambda m, x: beam_search(
        m, x, 3, 0.6, 7, constraint=PrefixConstraint(
            tf.constant([[5, 6], [7, 0], [0, 0], [9, 9]], tf.int32))),
}


def _ops(fn, *args):
  graph = tf.function(fn, autograph=False).get_concrete_function(
      *args).graph.as_graph_def()
  return {n.op for f in graph.library.function for n in f.node_def} | {
      n.op for n in graph.node}


@pytest.mark.parametrize("name", ["transformer", "transformer_rotary"])
def test_in_place_writes_give_the_selects_ids(name, monkeypatch):
  model, inputs = _model(name), _inputs()
  results = {}
  for kernels in ("1", "0"):
    monkeypatch.setenv("T2T_KERAS_KERNELS", kernels)
    for what, search in SEARCHES.items():
      fn = lambda x, search=search: search(model, x)  # pylint: disable=cell-var-from-loop
      assert ("InplaceUpdate" in _ops(fn, inputs)) == (kernels == "1"), what
      results[kernels, what] = [t.numpy() for t in
                                tf.function(fn, autograph=False)(inputs)]
  for what in SEARCHES:
    for on, off in zip(results["1", what], results["0", what]):
      np.testing.assert_array_equal(on, off, err_msg=what)
  # Twice in place: the same ids (no buffer written by an earlier call).
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  twice = tf.function(lambda x: SEARCHES["beam n-best"](model, x),
                      autograph=False)
  first = twice(inputs)[0].numpy()
  np.testing.assert_array_equal(first, twice(inputs)[0].numpy())


def test_a_step_outside_a_search_loop_leaves_its_cache_as_it_was(
    monkeypatch):
  """A model's step called on its own (not in a loop that owns the cache)
  writes a new tensor: the cache passed in is unchanged, and a second step
  from it is the first one's."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  model, inputs = _model(), _inputs()

  @tf.function(autograph=False)
  def two_steps(x):
    state = model.encode(x)
    cache = model.init_cache(state, 5)
    ids = tf.fill([tf.shape(x)[0]], 3)
    one, after = model.decode_step(ids, 0, cache)
    again, _ = model.decode_step(ids, 0, cache)
    return one, again, after, cache

  one, again, after, cache = two_steps(inputs)
  np.testing.assert_array_equal(one.numpy(), again.numpy())
  keys = [c["self"]["key"].numpy() for c in cache["layers"]]
  assert all(not k.any() for k in keys)           # still the empty cache
  assert all(c["self"]["key"].numpy()[:, :, 0].any()
             for c in after["layers"])
  assert "InplaceUpdate" not in _ops(two_steps, inputs)


def test_an_xla_search_keeps_the_select():
  from t2t_keras.decoding.xla import xla_function  # pylint: disable=g-import-not-at-top
  model, inputs = _model(), _inputs()
  fn = lambda x: greedy_decode(model, x, 7)  # pylint: disable=unnecessary-lambda-assignment
  graph = tf.function(fn, autograph=False)(inputs)[0].numpy()
  np.testing.assert_array_equal(xla_function(fn, autograph=False)(inputs)[0]
                                .numpy(), graph)
