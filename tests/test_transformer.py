"""Numerics of the whole model: causality, padding, the decoding cache."""

import numpy as np
import pytest
from keras import ops

import t2t_keras
from t2t_keras import registry

VOCAB = 23


def tiny(overrides=""):
  hp = registry.hparams("transformer_tiny").parse(
      "hidden_size=32,filter_size=64,num_heads=4")
  hp.parse(overrides)
  return t2t_keras.build_model(hparams=hp, vocab_size=VOCAB)


def ids(rng, batch, length):
  return rng.randint(2, VOCAB, size=(batch, length)).astype("int32")


@pytest.mark.parametrize("overrides", ["", "norm_position=pre", "pos=emb"])
def test_decoder_output_at_t_ignores_later_targets(overrides):
  model = tiny(overrides)
  rng = np.random.RandomState(0)
  inputs, targets = ids(rng, 2, 5), ids(rng, 2, 7)
  base = ops.convert_to_numpy(model({"inputs": inputs, "targets": targets}))
  changed = targets.copy()
  changed[:, 4:] = ids(rng, 2, 3)
  out = ops.convert_to_numpy(model({"inputs": inputs, "targets": changed}))
  # Position t predicts targets[t] from targets[:t]: positions 0..4 see only
  # targets[:4], which did not change.
  np.testing.assert_allclose(out[:, :5], base[:, :5], atol=1e-5)
  assert not np.allclose(out[:, 5:], base[:, 5:], atol=1e-3)


def test_encoder_outputs_ignore_appended_padding():
  model = tiny()
  rng = np.random.RandomState(1)
  inputs = ids(rng, 2, 6)
  padded = np.concatenate([inputs, np.zeros((2, 5), "int32")], axis=1)
  a, _ = model.encode(inputs)
  b, _ = model.encode(padded)
  np.testing.assert_allclose(ops.convert_to_numpy(b)[:, :6],
                             ops.convert_to_numpy(a), atol=1e-5)
  targets = ids(rng, 2, 4)
  la = model({"inputs": inputs, "targets": targets})
  lb = model({"inputs": padded, "targets": targets})
  np.testing.assert_allclose(ops.convert_to_numpy(la),
                             ops.convert_to_numpy(lb), atol=1e-5)


@pytest.mark.parametrize("overrides", [
    "", "norm_position=pre", "pos=emb",
    "shared_embedding_and_softmax_weights=false,shared_embedding=false",
    "attention_key_size=4,attention_value_size=12"])
def test_cached_decoding_equals_full_pass(overrides):
  model = tiny(overrides)
  rng = np.random.RandomState(2)
  inputs = ids(rng, 3, 6)
  inputs[0, 4:] = 0  # padding in the source
  targets = ids(rng, 3, 8)
  full = ops.convert_to_numpy(model({"inputs": inputs, "targets": targets}))
  cache = model.init_cache(model.encode(inputs), max_length=10)
  previous = np.zeros((3,), "int32")
  for t in range(8):
    logits, cache = model.decode_step(previous, t, cache)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, t],
                               atol=1e-5, rtol=1e-5)
    previous = targets[:, t]


def test_logits_are_float32_under_mixed_bfloat16():
  """The model's logits are float32; the training loss's stay bfloat16 (no
  float32 copy) and give the same loss."""
  import keras
  from t2t_keras.training.loss import smoothed_cross_entropy
  keras.config.set_dtype_policy("mixed_bfloat16")
  try:
    model = tiny("layer_prepostprocess_dropout=0,attention_dropout=0,"
                 "relu_dropout=0")
    rng = np.random.RandomState(4)
    features = {"inputs": ids(rng, 2, 3), "targets": ids(rng, 2, 4)}
    logits = model(features, training=True)
    assert logits.dtype == "float32"
    assert model.target_embedding.embeddings.dtype == "float32"
    for_loss = model.training_logits(features)
    assert for_loss.dtype == "bfloat16"
    np.testing.assert_array_equal(
        ops.convert_to_numpy(ops.cast(for_loss, "float32")),
        ops.convert_to_numpy(logits))
    losses = [ops.convert_to_numpy(smoothed_cross_entropy(
        z, features["targets"], 0.1)[0]) for z in (logits, for_loss)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)
  finally:
    keras.config.set_dtype_policy("float32")


def test_untied_embeddings_take_more_parameters():
  shared = tiny().count_params()
  untied = tiny("shared_embedding=false,"
                "shared_embedding_and_softmax_weights=false").count_params()
  assert untied - shared == 2 * VOCAB * 32


def test_different_vocabularies_need_untied_embeddings():
  hp = registry.hparams("transformer_tiny")
  with pytest.raises(ValueError, match="shared_embedding=True needs one"):
    t2t_keras.build_model(hparams=hp, input_vocab_size=10,
                          target_vocab_size=12)
  hp.shared_embedding = False
  model = t2t_keras.build_model(hparams=hp, input_vocab_size=10,
                                target_vocab_size=12)
  logits = model({"inputs": np.ones((1, 3), "int32"),
                  "targets": np.ones((1, 2), "int32")})
  assert tuple(logits.shape) == (1, 2, 12)


def test_dropout_is_applied_only_in_training():
  model = tiny("layer_prepostprocess_dropout=0.5")
  feats = {"inputs": np.full((1, 4), 3, "int32"),
           "targets": np.full((1, 4), 4, "int32")}
  a = ops.convert_to_numpy(model(feats, training=False))
  b = ops.convert_to_numpy(model(feats, training=False))
  c = ops.convert_to_numpy(model(feats, training=True))
  np.testing.assert_array_equal(a, b)
  assert not np.allclose(a, c)


def test_keras_save_and_load(tmp_path):
  import keras
  model = tiny("pos=emb")
  feats = {"inputs": np.full((1, 4), 3, "int32"),
           "targets": np.full((1, 3), 4, "int32")}
  path = str(tmp_path / "model.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  np.testing.assert_allclose(ops.convert_to_numpy(loaded(feats)),
                             ops.convert_to_numpy(model(feats)), atol=1e-6)


@pytest.mark.parametrize("overrides", ["", "norm_position=pre,pos=emb,"
                                       "shared_embedding=false,"
                                       "shared_embedding_and_softmax_weights=false"])
def test_object_checkpoint_holds_every_weight(tmp_path, overrides):
  """tf.train.Checkpoint(model=...) must save all weights by name (Keras 3
  hides lists of layers from it), so averaged and exported models are whole."""
  import tensorflow as tf
  model = tiny(overrides)
  path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
  saved = [k for k in tf.train.load_checkpoint(path).get_variable_to_shape_map()
           if k.endswith("VARIABLE_VALUE")]
  assert len(saved) == len(model.weights)
  clone = tiny(overrides)
  tf.train.Checkpoint(model=clone).restore(path).assert_nontrivial_match()
  for a, b in zip(model.weights, clone.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_building_runs_each_layer_once(monkeypatch):
  """Building runs the tiny example through each encoder and decoder layer
  once, eagerly: Keras traces a layer without ``build`` symbolically first
  (three runs of each layer inside a stack), which took twice as long
  to build a model (2.16 s against 1.02 s for this tiny one)."""
  from t2t_keras.layers.decoder import DecoderLayer
  from t2t_keras.layers.encoder import EncoderLayer
  runs = []
  for cls in (EncoderLayer, DecoderLayer):
    def counted(self, *args, _call=cls.call, **kwargs):
      runs.append(type(self).__name__)
      return _call(self, *args, **kwargs)
    monkeypatch.setattr(cls, "call", counted)
  tiny()
  n = registry.hparams("transformer_tiny").num_hidden_layers
  assert sorted(runs) == ["DecoderLayer"] * n + ["EncoderLayer"] * n
