"""Decoding under a mixed policy casts the weights once a batch: the same
outputs bit for bit, and no weight cast inside the decoding loop."""

import contextlib

import numpy as np
import pytest
import tensorflow as tf

import t2t_keras
from t2t_keras.decoding import beam_search, greedy_decode
from t2t_keras.kernels.weights_once import weights_once
from t2t_keras.models import prepared

VOCAB = 40


@pytest.fixture(name="mixed_model")
def fixture_mixed_model():
  import keras
  keras.config.set_dtype_policy("mixed_bfloat16")
  try:
    keras.utils.set_random_seed(5)
    yield t2t_keras.build_model(
        "transformer_tiny", vocab_size=VOCAB,
        hparams_overrides="hidden_size=32,filter_size=64,num_heads=2")
  finally:
    keras.config.set_dtype_policy("float32")


def inputs():
  ids = np.random.RandomState(2).randint(2, VOCAB, (3, 6)).astype("int32")
  ids[:, -1] = 1
  ids[0, 4:] = [1, 0]
  return tf.constant(ids)


SEARCHES = {
    "beam": lambda search, model, x: search(model, x, 3, 0.6, 5),
    "greedy": lambda search, model, x: search(model, x, 5),
}


def traced(kind, search, model):
  return tf.function(
      lambda x: SEARCHES[kind](search, model, x),
      input_signature=[tf.TensorSpec([None, None], tf.int32)])


def loop_weight_casts(concrete):
  """Casts of variable reads inside the bodies of the function's while
  loops (float32 weights becoming bfloat16 each step). LayerNorm's gamma and
  beta are read in float32 (Keras does not autocast that layer), so reads
  alone would count them."""
  library = {f.signature.name: f
             for f in concrete.graph.as_graph_def().library.function}
  bodies = [library[op.get_attr("body").name]
            for op in concrete.graph.get_operations()
            if op.type in ("While", "StatelessWhile")]
  assert bodies
  count = 0
  for body in bodies:
    reads = {n.name for n in body.node_def if n.op == "ReadVariableOp"}
    count += sum(n.op == "Cast" and n.input[0].split(":")[0] in reads
                 for n in body.node_def)
  return count


@pytest.mark.parametrize("kind", ["beam", "greedy"])
def test_same_outputs_and_no_weight_cast_in_the_loop(mixed_model, kind,
                                                     monkeypatch):
  search = {"beam": beam_search, "greedy": greedy_decode}[kind]
  once = traced(kind, search, mixed_model)
  spec = tf.TensorSpec([None, None], tf.int32)
  once.get_concrete_function(spec)
  # The prepared model reads through weights_once; without it, every step
  # reads and casts every weight.
  monkeypatch.setattr(prepared, "weights_once",
                      lambda model: contextlib.nullcontext())
  plain = traced(kind, search, mixed_model)
  plain.get_concrete_function(spec)
  x = inputs()
  for got, want in zip(once(x), plain(x)):
    np.testing.assert_array_equal(got.numpy(), want.numpy())
  assert loop_weight_casts(plain.get_concrete_function(spec)) > 20
  assert loop_weight_casts(once.get_concrete_function(spec)) == 0


def test_float32_models_are_left_alone():
  model = t2t_keras.build_model("transformer_tiny", vocab_size=VOCAB)
  with weights_once(model) as scope:
    assert scope is None          # contextlib.nullcontext
