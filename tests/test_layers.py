"""Layer numerics against the paper's formulas."""

import math

import keras
import numpy as np
import pytest
from keras import ops

from t2t_keras import layers
from t2t_keras.models import incremental
from t2t_keras.layers import masks


def test_sinusoid_at_hand_computed_points():
  pe = ops.convert_to_numpy(layers.sinusoid(ops.arange(4), 6))
  assert pe.shape == (4, 6)
  # PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), d = 6.
  assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
  assert pe[1, 0] == pytest.approx(math.sin(1.0), abs=1e-6)
  assert pe[1, 1] == pytest.approx(math.cos(1.0), abs=1e-6)
  assert pe[3, 2] == pytest.approx(math.sin(3 / 10000 ** (2 / 6)), abs=1e-6)
  assert pe[3, 3] == pytest.approx(math.cos(3 / 10000 ** (2 / 6)), abs=1e-6)
  assert pe[2, 4] == pytest.approx(math.sin(2 / 10000 ** (4 / 6)), abs=1e-6)
  assert pe[2, 5] == pytest.approx(math.cos(2 / 10000 ** (4 / 6)), abs=1e-6)


def test_sinusoid_needs_even_depth():
  with pytest.raises(ValueError, match="even depth"):
    layers.sinusoid(ops.arange(3), 5)


@pytest.mark.parametrize("layer", [
    layers.SinusoidalPositionalEncoding(),
    layers.LearnedPositionalEmbedding(16)])
def test_positions_with_offset_match_full_sequence(layer):
  x = np.random.RandomState(0).randn(2, 7, 8).astype("float32")
  full = ops.convert_to_numpy(layer(x))
  step = ops.convert_to_numpy(layer(x[:, 4:5], offset=4))
  np.testing.assert_allclose(step, full[:, 4:5], atol=1e-6)


def test_masks():
  bias = ops.convert_to_numpy(masks.padding_bias(np.array([[5, 1, 0]])))
  assert bias.shape == (1, 1, 1, 3)
  assert bias[0, 0, 0].tolist() == [0.0, 0.0, masks.NEG_INF]
  causal = ops.convert_to_numpy(masks.causal_bias(3))[0, 0]
  assert (causal == np.triu(np.full((3, 3), masks.NEG_INF), 1)).all()


def test_scaled_dot_product_attention_formula_and_mask():
  rng = np.random.RandomState(0)
  q, k = rng.randn(2, 3, 4, 5), rng.randn(2, 3, 6, 5)
  v = rng.randn(2, 3, 6, 7)
  q, k, v = (a.astype("float32") for a in (q, k, v))
  bias = masks.padding_bias(np.array([[3, 3, 3, 3, 0, 0], [3] * 6]))
  out, w = layers.ScaledDotProductAttention()(q, k, v, bias=bias,
                                              return_weights=True)
  out, w = ops.convert_to_numpy(out), ops.convert_to_numpy(w)
  # Weights sum to 1 over unmasked keys and are 0 on masked keys.
  np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)
  assert np.abs(w[0, :, :, 4:]).max() < 1e-30
  # Equation (1), by hand.
  logits = q @ np.swapaxes(k, -1, -2) / math.sqrt(5)
  logits[0, :, :, 4:] = -np.inf
  expected_w = np.exp(logits - logits.max(-1, keepdims=True))
  expected_w /= expected_w.sum(-1, keepdims=True)
  np.testing.assert_allclose(w, expected_w, atol=1e-6)
  np.testing.assert_allclose(out, expected_w @ v, atol=1e-5)


def test_attention_dropout_only_in_training():
  rng = np.random.RandomState(1)
  q = rng.randn(1, 1, 4, 8).astype("float32")
  layer = layers.ScaledDotProductAttention(dropout=0.5)
  a = ops.convert_to_numpy(layer(q, q, q, training=False))
  b = ops.convert_to_numpy(layer(q, q, q, training=False))
  c = ops.convert_to_numpy(layer(q, q, q, training=True))
  np.testing.assert_array_equal(a, b)
  assert not np.allclose(a, c)


def test_multi_head_attention_key_and_value_sizes():
  layer = layers.MultiHeadAttention(num_heads=4, key_size=3, value_size=5)
  x = np.ones((2, 6, 16), "float32")
  out, w = layer(x, return_weights=True)
  assert tuple(out.shape) == (2, 6, 16) and tuple(w.shape) == (2, 4, 6, 6)
  shapes = {v.path.split("/")[-2] + "/" + v.path.split("/")[-1]:
            tuple(v.shape) for v in layer.weights}
  assert shapes["query/kernel"] == (16, 12)   # d_model x h*d_k
  assert shapes["key/kernel"] == (16, 12)
  assert shapes["value/kernel"] == (16, 20)   # d_model x h*d_v
  assert shapes["output/kernel"] == (20, 16)  # h*d_v x d_model


def test_multi_head_attention_cache_matches_full_pass():
  layer = layers.MultiHeadAttention(num_heads=2, key_size=4, value_size=3)
  x = np.random.RandomState(2).randn(2, 5, 8).astype("float32")
  full = ops.convert_to_numpy(layer(x, bias=masks.causal_bias(5)))
  cache = {"key": np.zeros((2, 2, 7, 4), "float32"),
           "value": np.zeros((2, 2, 7, 3), "float32")}
  for t in range(5):   # models.incremental: the layer a position at a time
    out, cache = incremental.self_attention_step(
        layer, x[:, t:t + 1], incremental.decoding_step(t, 7), cache,
        incremental.Products())
    assert tuple(cache["key"].shape) == (2, 2, 7, 4)   # fixed: max_length
    assert tuple(cache["value"].shape) == (2, 2, 7, 3)
    written = ops.convert_to_numpy(cache["key"])
    assert not written[:, :, t + 1:].any() and written[:, :, t].any()
    np.testing.assert_allclose(ops.convert_to_numpy(out)[:, 0], full[:, t],
                               atol=1e-5)


def test_embedding_scale_and_logits():
  emb = layers.TokenEmbedding(10, 4)
  ids = np.array([[3, 0]])
  vectors = ops.convert_to_numpy(emb(ids))
  table = ops.convert_to_numpy(emb.embeddings)
  np.testing.assert_allclose(vectors[0, 0], table[3] * 2.0, rtol=1e-6)
  x = np.random.RandomState(3).randn(1, 2, 4).astype("float32")
  logits = emb(x, reverse=True)
  assert logits.dtype == "float32"
  np.testing.assert_allclose(ops.convert_to_numpy(logits), x @ table.T,
                             rtol=1e-5, atol=1e-6)


def test_feed_forward_is_equation_2():
  ffn = layers.PositionwiseFeedForward(filter_size=6)
  x = np.random.RandomState(4).randn(2, 3, 4).astype("float32")
  out = ops.convert_to_numpy(ffn(x))
  w1, b1, w2, b2 = (ops.convert_to_numpy(w) for w in ffn.weights)
  np.testing.assert_allclose(out, np.maximum(0, x @ w1 + b1) @ w2 + b2,
                             rtol=1e-5, atol=1e-5)


def test_post_norm_encoder_layer_is_layernorm_of_residual():
  layer = layers.EncoderLayer(2, 4, 4, 16, dropout=0.0)
  x = np.random.RandomState(5).randn(1, 3, 8).astype("float32")
  out = ops.convert_to_numpy(layer(x))
  # Every position of a post-norm output is normalized (gain 1, bias 0).
  np.testing.assert_allclose(out.mean(-1), 0.0, atol=1e-5)
  np.testing.assert_allclose(out.std(-1), 1.0, atol=1e-3)
  pre = layers.EncoderLayer(2, 4, 4, 16, dropout=0.0, norm_position="pre")
  assert not np.allclose(ops.convert_to_numpy(pre(x)).std(-1), 1.0, atol=1e-3)


@pytest.mark.parametrize("make", [
    lambda: layers.ScaledDotProductAttention(dropout=0.1),
    lambda: layers.MultiHeadAttention(2, 3, 5, dropout=0.1),
    lambda: layers.TokenEmbedding(11, 8),
    lambda: layers.PositionwiseFeedForward(16, relu_dropout=0.1),
    lambda: layers.LearnedPositionalEmbedding(12),
    lambda: layers.SinusoidalPositionalEncoding(),
    lambda: layers.EncoderLayer(2, 4, 4, 16, norm_position="pre"),
    lambda: layers.DecoderLayer(2, 4, 4, 16),
    lambda: layers.TransformerEncoder(2, num_heads=2, key_size=4, value_size=4, filter_size=16, pos="emb"),
    lambda: layers.TransformerDecoder(2, num_heads=2, key_size=4, value_size=4, filter_size=16, norm_position="pre"),
])
def test_get_config_round_trip(make):
  layer = make()
  config = layer.get_config()
  clone = type(layer).from_config(config)
  assert clone.get_config() == config
  serialized = keras.saving.serialize_keras_object(layer)
  assert keras.saving.deserialize_keras_object(serialized).get_config() == \
      config


def test_dropout_rate_scale_and_fresh_masks():
  x = np.ones((64, 512), "float32")
  layer = layers.Dropout(0.1, seed=3)
  assert (ops.convert_to_numpy(layer(x, training=False)) == x).all()
  first = ops.convert_to_numpy(layer(x, training=True))
  second = ops.convert_to_numpy(layer(x, training=True))
  for out in (first, second):
    dropped = (out == 0).mean()
    assert abs(dropped - 0.1) < 0.005                     # 32,768 draws
    kept = out[out != 0]
    np.testing.assert_allclose(kept, 65536 / (65536 - 6554), rtol=1e-6)
    assert abs(out.mean() - 1.0) < 0.01                   # unbiased
  assert (first != second).any()                          # a new mask a call
  # Bits pair up across the last axis: neighbours are independent.
  both = ((first[:, 0::2] == 0) & (first[:, 1::2] == 0)).mean()
  assert abs(both - 0.01) < 0.003
  odd = ops.convert_to_numpy(layers.Dropout(0.5, seed=1)(
      np.ones((8, 7), "float32"), training=True))          # Keras's path
  assert set(np.unique(odd)) <= {0.0, 2.0}


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
@pytest.mark.parametrize("make, shape", [
    (lambda p, ours: (layers.LayerNormalization if ours else
                      keras.layers.LayerNormalization)(epsilon=1e-6, dtype=p),
     (3, 5, 16)),
    (lambda p, ours: (layers.Dense if ours else keras.layers.Dense)(
        7, activation="relu", dtype=p), (15, 16)),
    (lambda p, ours: (layers.Dense if ours else keras.layers.Dense)(
        7, dtype=p), (15, 16)),
])
def test_written_out_gradients_are_keras_layers(make, shape, policy):
  """LayerNormalization and Dense (their own gradients on TensorFlow) give
  Keras's outputs and gradients, for the input and every weight, and
  Keras's outputs at inference (LayerNormalization's own forward there)."""
  import tensorflow as tf
  dtype = "float32" if policy == "float32" else "bfloat16"
  x = tf.constant(np.random.RandomState(0).randn(*shape) * 3 + 1, dtype)
  results = []
  for ours in (False, True):
    layer = make(policy, ours)
    layer.build(shape)
    for i, weight in enumerate(layer.weights):
      weight.assign(np.random.RandomState(i).randn(*weight.shape))
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = layer(x, training=True)
      up = tf.constant(np.random.RandomState(1).randn(*y.shape), "float32")
      loss = tf.reduce_sum(tf.cast(y, "float32") * up)
    grads = tape.gradient(loss, [x] + [w.value for w in layer.weights])
    results.append([np.asarray(tf.cast(t, "float32"))
                    for t in [y, layer(x)] + grads])
    names = ["output", "inference"] + ["input"] + [
        w.name for w in layer.weights]
  for name, keras_value, our_value in zip(names, *results):
    if name == "bias" and dtype == "bfloat16":
      continue  # Keras's is less exact; see the test below.
    np.testing.assert_allclose(our_value, keras_value, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("activation", ["relu", None])
def test_bfloat16_bias_gradient_is_the_rounded_exact_column_sum(activation):
  """Dense's bias gradient in bfloat16 is sum(dy) over the rows rounded
  to bfloat16 (to one step), as a product with a row of ones accumulates it (Keras's
  BiasAddGrad missed it by about 10 at 4,096 rows of N(0, 9))."""
  import tensorflow as tf
  rows, units = 4096, 8
  x = tf.constant(np.random.RandomState(0).randn(rows, 16), "bfloat16")
  up = tf.constant(np.random.RandomState(1).randn(rows, units) * 3,
                   "float32")
  layer = layers.Dense(units, activation=activation, dtype="mixed_bfloat16")
  layer.build((rows, 16))
  with tf.GradientTape() as tape:
    y = layer(x, training=True)
    loss = tf.reduce_sum(tf.cast(y, "float32") * up)
  bias_grad = tape.gradient(loss, layer.bias.value)
  dy = np.asarray(tf.cast(tf.cast(up, "bfloat16"), "float32"), np.float64)
  if activation:
    dy = dy * (np.asarray(tf.cast(y, "float32")) > 0)
  exact = np.asarray(tf.cast(tf.cast(dy.sum(0), "bfloat16"), "float32"))
  # Within one bfloat16 step of it (a CPU without bfloat16 units rounds a
  # partial sum on the way: 188 for 189 seen), not Keras's ~10 off.
  step = 2.0 ** (np.floor(np.log2(np.abs(exact))) - 7)
  assert (np.abs(np.asarray(tf.cast(bias_grad, "float32")) - exact)
          <= step).all(), (np.asarray(tf.cast(bias_grad, "float32")), exact)


def test_rotary_scores_depend_on_distance_only():
  from t2t_keras.layers.rotary_attention import rotate
  rng = np.random.RandomState(7)
  q = rng.randn(1, 1, 1, 8).astype("float32")
  k = rng.randn(1, 1, 1, 8).astype("float32")

  def score(m, n):
    return float(ops.sum(rotate(q, m) * rotate(k, n)))

  assert score(5, 2) == pytest.approx(score(13, 10), rel=1e-4)
  assert score(5, 2) != pytest.approx(score(5, 3), rel=1e-3)
  # A rotation keeps lengths; position 0 is the identity.
  np.testing.assert_allclose(ops.convert_to_numpy(rotate(q, 0)), q, atol=1e-6)
  assert np.linalg.norm(ops.convert_to_numpy(rotate(q, 9))) == pytest.approx(
      float(np.linalg.norm(q)), rel=1e-5)


def test_kernels_rule(monkeypatch):
  from t2t_keras import kernels
  import tensorflow as tf
  monkeypatch.delenv("T2T_KERAS_KERNELS", raising=False)
  assert kernels.enabled() == (
      keras.backend.backend() == "tensorflow"
      and not tf.config.list_physical_devices("GPU"))
  monkeypatch.setenv("T2T_KERAS_KERNELS", "0")
  assert not kernels.enabled()
  # Off, the layers are Keras's: the same values.
  x = np.random.RandomState(2).randn(6, 16).astype("float32")
  dense = layers.Dense(4)
  plain = keras.layers.Dense(4)
  plain.build((None, 16))
  dense.build((None, 16))
  plain.set_weights(dense.get_weights())
  np.testing.assert_allclose(ops.convert_to_numpy(dense(x, training=True)),
                             ops.convert_to_numpy(plain(x)), rtol=1e-6)
