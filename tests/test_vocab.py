"""Subword vocabularies on real text: size, exact round trips, in-graph ops,
reproducibility."""

import os

import pytest
import tensorflow as tf

from t2t_keras.data.corpus import sample_lines
from t2t_keras.data.vocab import EOS_ID, SubwordVocab


@pytest.fixture(scope="module")
def multi30k_vocab(shared_data):
  data = os.path.join(shared_data, "multi30k")
  texts = [line for lang in ("en", "de")
           for line in sample_lines(os.path.join(data, f"train.{lang}"),
                                    1_000_000)]
  return SubwordVocab.build(texts, 8000), texts


def newstest2013(shared_data):
  lines = []
  for lang in ("en", "de", "fr"):
    path = os.path.join(shared_data, "wmt14", f"newstest2013.{lang}")
    with open(path, encoding="utf-8") as f:
      lines.extend(line.rstrip("\n") for line in f)
  return lines


def test_size_within_2_percent_of_target(multi30k_vocab):
  vocab, _ = multi30k_vocab
  assert abs(vocab.size - 8000) <= 160


def test_newstest2013_round_trips_exactly(multi30k_vocab, shared_data):
  vocab, _ = multi30k_vocab
  lines = newstest2013(shared_data)
  assert len(lines) == 9000
  unseen = [l for l in lines if vocab.decode(vocab.encode(l)) != l]
  assert not unseen, unseen[:3]
  # Characters never seen in Multi30k come back through byte fallback.
  for text in ("Größe – „Zitat“ naïve café", "中文 ☃ 🤖", "  two  spaces ",
               "tab\there", ""):
    assert vocab.decode(vocab.encode(text)) == text


def test_in_graph_ops_match_python(multi30k_vocab, shared_data):
  vocab, _ = multi30k_vocab
  lines = newstest2013(shared_data)[:3000] + ["中文 ☃ 🤖", ""]
  ragged = vocab.tf_encode(tf.constant(lines))
  assert ragged.to_list()[:50] == [vocab.encode(l) for l in lines[:50]]
  decoded = vocab.tf_decode(ragged).numpy()
  assert [d.decode("utf-8") for d in decoded] == lines

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
  def round_trip(strings):
    ids = vocab.tf_encode(strings)
    dense = tf.concat([ids.to_tensor(),                      # 0-padded
                       tf.fill([tf.shape(strings)[0], 1], EOS_ID),
                       tf.fill([tf.shape(strings)[0], 2], 7)], axis=1)
    return vocab.tf_decode(dense)    # stops at EOS, ignores padding

  out = round_trip(tf.constant(lines[:20])).numpy()
  assert [o.decode("utf-8") for o in out] == lines[:20]


def test_same_input_same_vocabulary(multi30k_vocab, tmp_path):
  vocab, texts = multi30k_vocab
  again = SubwordVocab.build(texts, 8000)
  assert again.model_proto == vocab.model_proto
  path = str(tmp_path / "v.model")
  vocab.save(path)
  assert SubwordVocab.load(path).encode("a dog") == vocab.encode("a dog")


def test_decode_stops_at_eos_and_skips_padding(multi30k_vocab):
  vocab, _ = multi30k_vocab
  ids = vocab.encode("a dog runs")
  assert vocab.decode(ids + [EOS_ID] + vocab.encode("junk")) == "a dog runs"
  assert vocab.decode([0] + ids + [0, 0]) == "a dog runs"


def test_missing_vocabulary_names_the_fix(tmp_path):
  with pytest.raises(FileNotFoundError, match="run t2t-datagen"):
    SubwordVocab.load(str(tmp_path / "nope.model"))


def test_too_small_a_vocabulary_is_a_clear_error():
  with pytest.raises(ValueError, match="cannot build a vocabulary of 100 "
                     "pieces.*256 byte pieces"):
    SubwordVocab.build(["some text with many different letters xyzqjk"], 100)
