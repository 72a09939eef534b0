"""Lowercasing vocabularies (t2t-datagen --lowercase): the SentencePiece model
itself lowercases, in Python and in the graph, and a data directory keeps
the case it was built with."""

import os

import pytest
import tensorflow as tf

from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate
from t2t_keras.data.vocab import SubwordVocab


def _lines(shared_data, name, count):
  with open(os.path.join(shared_data, "multi30k", name),
            encoding="utf-8") as f:
    return [line.rstrip("\n") for line in f][:count]


@pytest.fixture(scope="module")
def lower_vocab(shared_data):
  texts = _lines(shared_data, "train.de", 3000) + \
      _lines(shared_data, "train.en", 3000)
  return SubwordVocab.build(texts, 2000, lowercase=True), texts


def test_round_trip_is_str_lower(lower_vocab, shared_data):
  vocab, _ = lower_vocab
  lines = _lines(shared_data, "val.de", 1014) + [
      "Größe – „ZITAT“ Ärger ÖL Übel", "İSTANBUL ΣΟΦΊΑ Straße", "  Two  ",
      ""]
  assert vocab.lowercases
  wrong = [l for l in lines if vocab.decode(vocab.encode(l)) != l.lower()]
  assert not wrong, wrong[:3]
  # Upper and lower case are one text to the model.
  assert vocab.encode("Ein Mann") == vocab.encode("ein mann")
  # In the graph too (tensorflow-text's detokenizer drops leading spaces,
  # lowercasing or not, so the padded line is left to Python).
  lines = [l for l in lines if not l.startswith(" ")]
  ragged = vocab.tf_encode(tf.constant(lines))
  assert ragged.to_list() == [vocab.encode(l) for l in lines]
  assert [d.decode("utf-8") for d in vocab.tf_decode(ragged).numpy()] == \
      [l.lower() for l in lines]


def test_same_texts_same_bytes_and_case_kept_by_default(lower_vocab):
  vocab, texts = lower_vocab
  again = SubwordVocab.build(texts, 2000, lowercase=True)
  assert again.model_proto == vocab.model_proto
  cased = SubwordVocab.build(texts, 2000)
  assert not cased.lowercases
  assert cased.decode(cased.encode("Ein Mann")) == "Ein Mann"


def _generate(raw, data, logs, **options):
  return generate("translate_local", str(data), raw_dir=str(raw),
                  log=logs.append, source_lang="en", target_lang="de",
                  vocab_size=300, **options)


def test_datagen_writes_lowercase_and_keeps_a_directory_s_case(tmp_path):
  raw = tmp_path / "raw"
  raw.mkdir()
  words = "The House by the River, Children Playing FOOTBALL".split()
  lines = [" ".join(words[(i + j) % len(words)] for j in range(5))
           for i in range(40)]
  for split in ("train", "dev", "test"):
    for lang in ("en", "de"):
      (raw / f"{split}.{lang}").write_text(
          "".join(l + "\n" for l in lines), encoding="utf-8")
  data = tmp_path / "data"
  logs = []
  problem = _generate(raw, data, logs, lowercase=True)
  assert any("lowercasing vocabulary" in line for line in logs)
  vocab = problem.vocab(str(data))
  targets = [vocab.decode(ex["targets"]) for ex in
             problem.examples("dev", str(data)).as_numpy_iterator()]
  assert sorted(targets) == sorted(l.lower() for l in lines)
  # Without the flag a re-run keeps what is there; the other case is refused.
  _generate(raw, data, logs)
  assert "all data" in logs[-1]
  with pytest.raises(CorpusError, match=r"lowercases all text.*"
                     r"for --nolowercase use another --data_dir"):
    _generate(raw, data, logs, lowercase=False)
  cased = tmp_path / "cased"
  _generate(raw, cased, logs)
  with pytest.raises(CorpusError, match=r"keeps the case of all text.*"
                     r"for --lowercase use another --data_dir"):
    _generate(raw, cased, logs, lowercase=True)
