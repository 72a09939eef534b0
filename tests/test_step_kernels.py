"""kernels.step_attention and kernels.one_row: a TensorFlow decoding step's
attention and one-row products on other ops give the plain layers' values,
and searches with them the same ids."""

import numpy as np
import pytest
import tensorflow as tf

import t2t_keras
from t2t_keras import kernels
from t2t_keras.decoding import greedy_decode
from t2t_keras.kernels import one_row, step_attention
from t2t_keras.layers.dot_product_attention import ScaledDotProductAttention

VOCAB = 40


def attention_inputs(batch, length, rng):
  q, k, v = (rng.randn(batch, 2, n, 8).astype("float32")
             for n in (1, length, length))
  bias = np.where(np.arange(length) > length // 2, -1e9, 0.0)
  return q, k, v, bias.reshape(1, 1, 1, length).astype("float32")


@pytest.mark.parametrize("batch", [1, 4])
def test_step_attention_is_equation_1(batch, monkeypatch):
  """The fast path's output and weights are the plain layer's, hooks
  included, in a graph as in eager mode; it is left out in training, for
  more than one query position, with the kernels off and under XLA."""
  rng = np.random.RandomState(batch)
  q, k, v, bias = attention_inputs(batch, 7, rng)
  term = rng.randn(1, 2, 1, 7).astype("float32")
  hooks = dict(extra_logits=lambda query: query[..., :1] * term,
               extra_values=lambda w: tf.reduce_sum(w, -1, keepdims=True))
  layer = ScaledDotProductAttention()

  def run():
    return layer(q, k, v, bias=bias, return_weights=True, **hooks)

  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  assert step_attention.fits(tf.constant(q), tf.constant(v), False)
  fast = [run(), tf.function(run)()]
  monkeypatch.setenv("T2T_KERAS_KERNELS", "0")
  assert not step_attention.fits(tf.constant(q), tf.constant(v), False)
  plain = run()
  for out in fast:
    for got, want in zip(out, plain):
      np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5,
                                 atol=1e-6)
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  assert not step_attention.fits(tf.constant(q), tf.constant(v), True)
  assert not step_attention.fits(tf.constant(k), tf.constant(v), False)
  assert not step_attention.fits(tf.cast(q, tf.bfloat16), tf.constant(v),
                                 False)
  seen = []
  tf.function(lambda: seen.append(kernels.in_xla()), jit_compile=True)()
  tf.function(lambda: seen.append(kernels.in_xla()))()
  assert seen == [True, False]


@pytest.fixture(name="model", scope="module")
def fixture_model():
  import keras
  keras.utils.set_random_seed(3)
  return t2t_keras.build_model(
      "transformer_tiny", vocab_size=VOCAB,
      hparams_overrides="hidden_size=32,filter_size=64,num_heads=2")


def sources(batch):
  ids = np.random.RandomState(batch).randint(2, VOCAB, (batch, 6))
  ids[:, -1] = 1
  return tf.constant(ids.astype("int32"))


def greedy(model):
  return tf.function(lambda x: greedy_decode(model, x, 6),
                     input_signature=[tf.TensorSpec([None, None], tf.int32)])


def product_ops(search):
  """BatchMatMulV3 ops that multiply by a Dense kernel in the search's
  graph functions (the one-row branch's; attention's are among them)."""
  graph = search.get_concrete_function().graph.as_graph_def()
  return sum(n.op == "BatchMatMulV3" for f in graph.library.function
             for n in f.node_def)


def test_one_row_steps_give_the_plain_search(model, monkeypatch):
  """Greedy search traced with the kernels on has a one-row branch of
  BatchMatMulV3 products; at one sentence (the branch run) and at three its
  ids are those of the search without kernels, its scores within float32
  rounding."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "0")
  plain = greedy(model)
  want = {b: plain(sources(b)) for b in (1, 3)}
  assert product_ops(plain) == 0
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  fast = greedy(model)
  got = {b: fast(sources(b)) for b in (1, 3)}
  layers = model.config.num_decoder_layers
  # Each decoder layer: 8 Dense products in the one-row branch, and 4
  # attention products in each branch.
  assert product_ops(fast) == layers * (8 + 4 + 4)
  for b in (1, 3):
    np.testing.assert_array_equal(got[b][0].numpy(), want[b][0].numpy())
    np.testing.assert_allclose(got[b][1].numpy(), want[b][1].numpy(),
                               rtol=1e-5)


def test_one_row_products_only_in_the_branch(monkeypatch):
  """A step of rows known when traced runs one side, no cond: the one-row
  side only at one row of a float32 model."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  seen = []

  def side(name):
    return lambda: seen.append(name) or tf.constant(0)

  one_row.step(side("one"), side("any"), 1, "float32")
  one_row.step(side("one"), side("any"), 3, "float32")
  one_row.step(side("one"), side("any"), 1, "bfloat16")
  assert seen == ["one", "any", "any"]


@pytest.mark.parametrize("shape", [(1, 8), (3, 1, 8), (1, 2, 8)])
def test_one_row_product_is_x_w(shape, monkeypatch):
  """``one_row.product`` (the stored [W^Q W^K W^V]'s product) is x W on
  either side, for rows and for [batch, ..., d] of an unknown batch."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  rng = np.random.RandomState(0)
  x = rng.randn(*shape).astype("float32")
  w = rng.randn(8, 5).astype("float32")
  spec = tf.TensorSpec((None,) + shape[1:], tf.float32)
  products = [tf.function(lambda x, one=one: one_row.product(
      x, tf.constant(w), one), input_signature=[spec])
              for one in (True, False)]
  for product in products:
    np.testing.assert_allclose(product(x).numpy(), x @ w, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("beam", [1, 2])
def test_a_decoder_of_fixed_weights_reads_copies(model, beam, monkeypatch):
  """t2t-decoder's Decoder (``fixed_weights``) is prepared with W^T and
  each decoder self-attention's [W^Q W^K W^V] stored once and decodes the
  ids of one that stores none (validation's, whose weights change)."""
  from t2t_keras.decoding.backends.decoder import Decoder
  from t2t_keras.decoding.options import decode_hparams
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  hparams = decode_hparams(f"beam_size={beam},extra_length=6")
  plain = Decoder(model, None, hparams)
  fixed = Decoder(model, None, hparams, fixed_weights=True)
  assert not plain.prepared.variables()
  assert len(fixed.prepared.variables()) == (
      1 + model.config.num_decoder_layers)
  for b in (1, 3):
    want, got = plain.search(sources(b)), fixed.search(sources(b))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
