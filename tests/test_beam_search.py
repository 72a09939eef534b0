"""Beam search and greedy decoding against brute force."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

import t2t_keras
from t2t_keras.decoding import beam_search, greedy_decode, length_penalty

VOCAB = 5          # 0 padding, 1 EOS, 2..4 words


def tiny_model(seed=3):
  import keras
  keras.utils.set_random_seed(seed)
  return t2t_keras.build_model(
      "transformer_tiny", vocab_size=VOCAB,
      hparams_overrides="hidden_size=16,filter_size=32,num_heads=2")


def step_log_probs(model, inputs, prefix, limit):
  """Uncached: the full forward pass on ``prefix``; padding masked, EOS
  forced at the limit (the decoder's own definition)."""
  targets = np.array([list(prefix) + [2]], "int32")   # any next token
  logits = model({"inputs": inputs, "targets": targets})[0, len(prefix)]
  logits = np.array(logits, np.float64)
  logits[0] = -np.inf
  if len(prefix) + 1 == limit:
    logits[np.arange(VOCAB) != 1] = -np.inf
  return logits - np.logaddexp.reduce(logits)


def brute_force(model, inputs, limit, alpha, reward=0.0):
  """Every sequence of words then EOS up to ``limit`` tokens, scored (each
  prefix's distribution computed once)."""
  steps = {}

  def log_probs(prefix):
    if prefix not in steps:
      steps[prefix] = step_log_probs(model, inputs, prefix, limit)
    return steps[prefix]

  scored = []
  for length in range(1, limit + 1):
    for words in itertools.product(range(2, VOCAB), repeat=length - 1):
      sequence = tuple(words) + (1,)
      logp = sum(log_probs(sequence[:t])[tok]
                 for t, tok in enumerate(sequence))
      scored.append((logp / ((5 + length) / 6) ** alpha + reward * length,
                     list(sequence)))
  return sorted(scored, reverse=True)


def strip(ids):
  ids = list(np.asarray(ids))
  return ids[:ids.index(1) + 1] if 1 in ids else ids


@pytest.mark.parametrize("alpha,reward", [(0.0, 0.0), (0.6, 0.0),
                                          (0.6, 1.5), (0.0, -1.0)])
def test_wide_beam_finds_the_best_sequence(alpha, reward):
  """Also with a length reward either way (the early stop's bound)."""
  model = tiny_model()
  inputs = np.array([[3, 1]], "int32")          # 2 tokens -> limit 2 + 2
  limit = 4
  best = brute_force(model, inputs, limit, alpha, reward)
  ids, scores = beam_search(model, inputs, beam_size=27, alpha=alpha,
                            extra_length=2, length_reward=reward)
  assert strip(ids[0, 0]) == best[0][1]
  assert float(scores[0, 0]) == pytest.approx(best[0][0], abs=1e-4)
  # The n-best list is the brute-force ranking (searched until K ended).
  ids, _ = beam_search(model, inputs, beam_size=27, alpha=alpha,
                       extra_length=2, nbest=True, length_reward=reward)
  for k in range(3):
    assert strip(ids[0, k]) == best[k][1]
  # A beam of 4 returns a sequence scored as the decoder scores it.
  ids4, scores4 = beam_search(model, inputs, beam_size=4, alpha=alpha,
                              extra_length=2, length_reward=reward)
  table = {tuple(seq): score for score, seq in best}
  assert float(scores4[0, 0]) == pytest.approx(
      table[tuple(strip(ids4[0, 0]))], abs=1e-4)
  assert float(scores4[0, 0]) <= best[0][0] + 1e-6


def test_greedy_equals_uncached_argmax_and_beam_search_batches():
  model = tiny_model(5)
  inputs = np.array([[3, 4, 2, 1], [2, 1, 0, 0]], "int32")
  ids, _ = greedy_decode(model, inputs, extra_length=3)
  for row, source in zip(np.asarray(ids), inputs):
    limit = int((source != 0).sum()) + 3
    prefix = []
    while not prefix or (prefix[-1] != 1 and len(prefix) < limit):
      prefix.append(int(np.argmax(step_log_probs(
          model, source[None], prefix, limit))))
    assert strip(row) == prefix
  # A sentence decodes the same alone and in a batch.
  alone, _ = beam_search(model, inputs[1:, :2], beam_size=3, extra_length=3)
  batched, _ = beam_search(model, inputs, beam_size=3, extra_length=3)
  assert strip(alone[0, 0]) == strip(batched[1, 0])


def test_outputs_respect_the_length_limit():
  model = tiny_model(7)
  inputs = np.array([[2, 3, 1]], "int32")
  for extra in (0, 1, 5):
    ids, _ = beam_search(model, inputs, beam_size=2, extra_length=extra)
    for k in range(2):
      assert len(strip(ids[0, k])) <= 3 + extra
      assert strip(ids[0, k])[-1] == 1


def test_length_penalty_is_gnmt():
  assert float(length_penalty(7, 0.6)) == pytest.approx((12 / 6) ** 0.6)
  assert float(length_penalty(3, 0.0)) == 1.0


def test_beam_search_runs_in_a_graph():
  model = tiny_model()

  @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
  def decode(inputs):
    return beam_search(model, inputs, beam_size=3, alpha=0.6, extra_length=4)

  eager = beam_search(model, np.array([[3, 2, 1]], "int32"), 3, 0.6, 4)
  graph = decode(tf.constant([[3, 2, 1]]))
  np.testing.assert_array_equal(eager[0], graph[0])



@pytest.mark.parametrize("beam", [4, 1])
def test_search_in_a_function_with_unknown_shapes_equals_eager(beam):
  """As t2t-decoder and the dev-BLEU decoder run it: a tf.function over
  [None, None] ids (the caches' shapes are then all dynamic). Greedy search
  on this 1-layer model returned empty float32 tensors from a Grappler
  fault before ``beam_search._per_hypothesis`` repeated its state."""
  import keras
  from t2t_keras.decoding.options import decode_hparams
  from t2t_keras.decoding.searches.search import search_function
  keras.utils.set_random_seed(0)
  model = t2t_keras.build_model("transformer_tiny", vocab_size=300,
                                hparams_overrides="num_hidden_layers=1")
  inputs = np.random.RandomState(0).randint(2, 300, (3, 7)).astype("int32")
  inputs[:, -1] = 1
  inputs = tf.constant(inputs)
  search = search_function(model, decode_hparams(f"beam_size={beam}"))
  ids, scores = tf.function(search, input_signature=[
      tf.TensorSpec([None, None], tf.int32)])(inputs)
  want_ids, want_scores = search(inputs)
  np.testing.assert_array_equal(ids.numpy(), want_ids.numpy())
  np.testing.assert_allclose(scores.numpy(), want_scores.numpy(), atol=1e-5)
