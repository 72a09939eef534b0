"""tensor2tensor's SubwordTextEncoder (data.t2t_subword) against
tensor2tensor's own ids (tests/fixtures/t2t/ids, made by tensor2tensor
1.15.7: scripts/t2t_reference), in Python and in the graph ops an export
serves."""

import gzip
import os

import pytest
import tensorflow as tf

from t2t_keras.data.t2t_subword import T2TSubwordVocab, UNDEFINED

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "t2t")
VOCABS = {"multi30k": os.path.join(
    FIXTURES, "data", "vocab.translate_ende_multi30k_local.2048.subwords"),
          "wmt_sample": os.path.join(FIXTURES, "ids",
                                     "vocab.wmt_sample.8192.subwords")}
CORPORA = {"newstest2013.en": "wmt14/newstest2013.en",
           "newstest2013.de": "wmt14/newstest2013.de",
           "multi30k_val.en": "multi30k/val.en",
           "multi30k_val.de": "multi30k/val.de"}


def _lines(shared_data, corpus):
  with open(os.path.join(shared_data, CORPORA[corpus]),
            encoding="utf-8") as f:
    return [line.strip() for line in f]


def _reference(vocab_name, corpus):
  with gzip.open(os.path.join(FIXTURES, "ids",
                              f"{vocab_name}.{corpus}.ids.gz"), "rt",
                 encoding="ascii") as f:
    return [[int(i) for i in line.split()] for line in f]


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
def test_python_ids_equal_tensor2tensors_on_every_line(vocab_name,
                                                       shared_data):
  vocab = T2TSubwordVocab.load(VOCABS[vocab_name])
  for corpus in CORPORA:
    lines, expected = _lines(shared_data, corpus), _reference(vocab_name,
                                                              corpus)
    assert len(lines) == len(expected)
    differing = [i for i, (line, ids) in enumerate(zip(lines, expected))
                 if vocab.encode(line) != ids]
    assert not differing, (corpus, differing[:5])
    # Every line decodes back (its characters escaped where unseen).
    assert [vocab.decode(ids) for ids in expected] == lines


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
def test_graph_ids_equal_tensor2tensors(vocab_name, shared_data):
  vocab = T2TSubwordVocab.load(VOCABS[vocab_name])
  for corpus in ("newstest2013.de", "multi30k_val.en"):
    lines, expected = _lines(shared_data, corpus), _reference(vocab_name,
                                                              corpus)
    got = vocab.tf_encode(tf.constant(lines)).to_list()
    assert got == expected, corpus
    text = vocab.tf_decode(tf.ragged.constant(expected, tf.int32)).numpy()
    assert [t.decode("utf-8") for t in text] == lines


def _vocab(subtokens):
  data = "\n".join(f"'{s}'" for s in subtokens) + "\n"
  return T2TSubwordVocab([s for s in subtokens], data.encode())


def test_escapes_decode_as_tensor2tensor_does():
  """Escaped code points, "\\u" and "\\\\" decode in Python and in the
  graph as tensor2tensor's _unescape_token; a code past U+10FFFF is
  tensor2tensor's U+3013."""
  vocab = _vocab(["<pad>_", "<EOS>_", "\\", "u", ";", "0", "1", "2", "3",
                  "4", "5", "6", "7", "8", "9", "_", "a", "b", " ", "a_"])
  ids = {s: i for i, s in enumerate(vocab.subtokens)}

  def spell(text):
    return [ids[c] for c in text]

  cases = {"\\65;b_": "Ab", "a\\u_": "a_", "\\\\_": "\\",
           "\\99999999;_": UNDEFINED, "\\1114112;_": UNDEFINED,
           "\\0000065;_": "A", "a_b_": "a b", "a_ _b_": "a b"}
  sequences = [spell(escaped) for escaped in cases]
  graph = vocab.tf_decode(tf.ragged.constant(sequences, tf.int32)).numpy()
  for (escaped, text), seq, got in zip(cases.items(), sequences, graph):
    assert vocab.decode(seq) == text, escaped
    assert got.decode("utf-8") == text, escaped
  # Encoding: "_" and "\\" escape, a character no subtoken holds is spelled.
  for text in ("a_b", "a\\b", "a\u00e9b", "  a  b ", "a\nb", ""):
    assert vocab.decode(vocab.encode(text)) == text
    assert vocab.tf_encode(tf.constant([text])).to_list()[0] == \
        vocab.encode(text)


def test_vocabulary_file_is_checked(tmp_path):
  bad = tmp_path / "vocab.subwords"
  bad.write_text("'a_'\n'b_'\n", encoding="utf-8")
  with pytest.raises(Exception, match="not a tensor2tensor subword "
                     "vocabulary: its first lines"):
    T2TSubwordVocab.load(str(bad))
