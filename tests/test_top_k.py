"""The beam search's blocked top-k and log-normalizer against TensorFlow's."""

import numpy as np
import tensorflow as tf

import t2t_keras
from t2t_keras.decoding import beam_search
from t2t_keras.decoding.searches import top_k


def test_blocked_top_k_equals_top_k():
  rng = np.random.RandomState(0)
  for vocab in (4097, 5000, 6 * top_k.BLOCK):     # ragged and whole blocks
    logits = rng.randn(6, vocab).astype("float32") * 4
    logits[:, 0] = -1e9                            # a masked column
    logits[1, :] = -1e9                            # a row with nothing left
    logits[1, 7] = 3.0
    logits[2, -3:] = 50.0 + np.arange(3)           # best in the ragged end
    values, indices = top_k.top_k_rows(tf.constant(logits), 8)
    want_values, want_indices = tf.math.top_k(logits, 8)
    np.testing.assert_array_equal(values.numpy(), want_values.numpy())
    keep = [0, 2, 3, 4, 5]                         # row 1 is all ties
    np.testing.assert_array_equal(indices.numpy()[keep],
                                  want_indices.numpy()[keep])
    assert indices.numpy()[1, 0] == 7


def test_log_normalizer_is_log_sum_exp():
  for vocab in (600, 5000):              # one top-k, and two levels
    assert top_k.few_blocks(vocab, 8) == (vocab == 600)
    logits = np.random.RandomState(1).randn(4, vocab).astype("float32") * 10
    logits[0, 5] = 80.0                            # a very peaked row
    values, indices = top_k.top_k_rows(tf.constant(logits), 8)
    got = top_k.log_normalizer(tf.constant(logits), values, indices)
    want = np.logaddexp.reduce(logits.astype("float64"), axis=1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-5)


def test_beam_search_same_with_plain_top_k(monkeypatch):
  import keras
  keras.utils.set_random_seed(4)
  model = t2t_keras.build_model(
      "transformer_tiny", vocab_size=4500,
      hparams_overrides="hidden_size=16,filter_size=32,num_heads=2")
  inputs = np.random.RandomState(2).randint(2, 4500, (3, 6))
  inputs[:, -1] = 1
  ids, scores = beam_search(model, inputs, beam_size=4, extra_length=4)
  monkeypatch.setattr(top_k, "top_k_rows", tf.math.top_k)
  want_ids, want_scores = beam_search(model, inputs, beam_size=4,
                                      extra_length=4)
  np.testing.assert_array_equal(ids.numpy(), want_ids.numpy())
  np.testing.assert_allclose(scores.numpy(), want_scores.numpy(), atol=1e-5)
