"""Sampling (seeded, top-k, nucleus) and forced-decoding scores."""


import numpy as np
import pytest
import tensorflow as tf

from commands import t2t_command
from t2t_keras import registry
from t2t_keras.decoding import greedy_decode, sample_decode
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.searches.sampling import filter_logits
from t2t_keras.decoding.jobs.scoring import Scorer
from t2t_keras.errors import UserError
from t2t_keras.export.exporter import export
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.models.builder import load_model_from_dir

SENTENCES = ["the dog sees a cat", "these old teachers help a small boat",
             "a bird", "that happy farmer calls the dark windows near a tree",
             "the red cars follow these young horses"]


@pytest.fixture(scope="module")
def trained(trained_run):
  data, run = trained_run
  vocab = registry.problem("translate_synthetic").vocab(data)
  model = load_model_from_dir(run)[0]
  return model, vocab, data, run


def batch(vocab, lines):
  ids = [vocab.encode(line) + [EOS_ID] for line in lines]
  longest = max(len(i) for i in ids)
  return tf.constant([i + [0] * (longest - len(i)) for i in ids], tf.int32)


def test_filter_logits_keeps_the_top_k_and_the_nucleus():
  log_probs = tf.math.log(tf.constant([[0.5, 0.3, 0.15, 0.05]]))
  kept = lambda logits: (logits.numpy()[0] > -1e8).tolist()
  assert kept(filter_logits(log_probs, "topk", top_k=2)) == [1, 1, 0, 0]
  assert kept(filter_logits(log_probs, "topk", top_k=0)) == [1, 1, 1, 1]
  assert kept(filter_logits(log_probs, "topp", top_p=0.7)) == [1, 1, 0, 0]
  assert kept(filter_logits(log_probs, "topp", top_p=0.85)) == [1, 1, 1, 0]
  assert kept(filter_logits(log_probs, "topp", top_p=1e-6)) == [1, 0, 0, 0]
  tempered = filter_logits(log_probs, "topk", temperature=2.0)
  np.testing.assert_allclose(tempered.numpy(), log_probs.numpy() / 2)


def test_top_k_1_and_a_tiny_nucleus_are_greedy(trained):
  model, vocab, _, _ = trained
  inputs = batch(vocab, SENTENCES)
  greedy, greedy_scores = greedy_decode(model, inputs)
  for method, options in (("topk", dict(top_k=1)),
                          ("topp", dict(top_p=1e-6))):
    ids, scores = sample_decode(model, inputs, method, temperature=3.0,
                                seed=9, **options)
    np.testing.assert_array_equal(ids.numpy(), greedy.numpy())
    np.testing.assert_allclose(scores.numpy(), greedy_scores.numpy(),
                               rtol=1e-5)


def test_sampling_is_seeded_and_reproducible(trained):
  model, vocab, _, _ = trained
  lines = SENTENCES * 4

  def sampled(seed):
    hparams = decode_hparams(f"sampling=topk,top_k=0,temperature=2.0,"
                             f"seed={seed}")
    return Decoder(model, vocab, hparams).decode(lines)
  first, again, other = sampled(1), sampled(1), sampled(2)
  assert first == again
  assert first != other
  beam = Decoder(model, vocab, decode_hparams()).decode(lines)
  assert first != beam and len(set(first)) > len(set(beam))


def test_sampling_settings_are_checked():
  for bad, word in (("sampling=topz", "topz"), ("sampling=topp,top_p=0",
                                                "top_p"),
                    ("sampling=topk,temperature=0", "temperature"),
                    ("sampling=topk,return_beams=true", "return_beams")):
    with pytest.raises(UserError, match=word):
      decode_hparams(bad)


def test_export_samples_with_its_seed(trained, tmp_path):
  model, vocab, _, _ = trained
  hparams = decode_hparams("sampling=topk,top_k=1,seed=4")
  served = tf.saved_model.load(export(model, vocab, hparams, str(tmp_path),
                                      version=1))
  inputs = batch(vocab, SENTENCES)
  exported = served.signatures["decode_ids"](input_ids=inputs)
  greedy, _ = greedy_decode(model, inputs)
  np.testing.assert_array_equal(exported["output_ids"].numpy(),
                                greedy.numpy())


def incremental_log_prob(model, source_ids, target_ids):
  """Sum of log P(target_t | source, target_<t) one decode_step at a time,
  over the tokens the searches may emit (every one but padding)."""
  inputs = tf.constant([source_ids], tf.int32)
  cache = model.init_cache(model.encode(inputs), len(target_ids))
  previous, total = tf.constant([0], tf.int32), 0.0
  for step, token in enumerate(target_ids):
    logits, cache = model.decode_step(previous, tf.constant(step), cache)
    logits = tf.tensor_scatter_nd_update(logits, [[0, PAD_ID]], [-np.inf])
    total += float(tf.nn.log_softmax(logits)[0, token])
    previous = tf.constant([token], tf.int32)
  return total


def test_forced_decoding_equals_the_sum_of_step_log_probs(trained):
  model, vocab, _, _ = trained
  targets = ["da jeba un vomije nitet", "", "di rusaen fijezui jeba",
             "un ka", "tor ruzuni lo mi sa te vo ni pe zu ba go"]
  pairs = list(zip(SENTENCES, targets))
  scorer = Scorer(model, vocab, batch_size=2)
  scores = scorer.score(pairs)
  assert len(scores) == len(pairs)
  for (source, target), (log_prob, tokens) in zip(pairs, scores):
    target_ids = vocab.encode(target) + [EOS_ID]
    assert tokens == len(target_ids)
    expected = incremental_log_prob(model, vocab.encode(source) + [EOS_ID],
                                    target_ids)
    assert log_prob == pytest.approx(expected, rel=1e-5, abs=1e-5)
    assert log_prob < 0
  # The model's own translation scores better than a scrambled one.
  own = Decoder(model, vocab, decode_hparams("beam_size=1")).decode(
      SENTENCES[:1])[0]
  good, bad = scorer.score([(SENTENCES[0], own),
                            (SENTENCES[0], " ".join(own.split()[::-1]))])
  assert good[0] > bad[0]


def decoder_command(*args):
  return t2t_command("t2t_decoder", *args)


def test_score_file_command(trained, tmp_path):
  _, _, data, run = trained
  common = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={run}"]
  tsv = tmp_path / "pairs.tsv"
  tsv.write_text("the dog sees a cat\tda jeba un vomije nitet\n"
                 "\t\nsome\ttab\tinside\n", encoding="utf-8")
  done = decoder_command(*common, f"--score_file={tsv}")
  assert done.returncode == 0, done.stderr
  lines = done.stdout.splitlines()
  assert len(lines) == 3
  for line in lines:
    log_prob, per_token, tokens = line.split("\t")
    assert float(log_prob) < 0 and int(tokens) >= 1
    assert float(per_token) == pytest.approx(float(log_prob) / int(tokens),
                                             abs=1e-3)
  sources, targets = tmp_path / "src", tmp_path / "tgt"
  sources.write_text("the dog sees a cat\na bird\n", encoding="utf-8")
  targets.write_text("da jeba un vomije nitet\n", encoding="utf-8")
  done = decoder_command(*common, f"--score_file={sources}",
                         f"--score_target_file={targets}")
  assert done.returncode == 2
  assert f"error: {targets} ends after 1 line(s)" in done.stderr
  targets.write_text("da jeba un vomije nitet\nun ka\n", encoding="utf-8")
  done = decoder_command(*common, f"--score_file={sources}",
                         f"--score_target_file={targets}")
  assert done.returncode == 0 and len(done.stdout.splitlines()) == 2
  assert done.stdout.splitlines()[0] == lines[0]
  bad = tmp_path / "bad.tsv"
  bad.write_text("no tab here\n", encoding="utf-8")
  done = decoder_command(*common, f"--score_file={bad}")
  assert done.returncode == 2 and f"{bad} line 1: no tab" in done.stderr
