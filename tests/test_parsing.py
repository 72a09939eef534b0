"""Trees: the round trip on the Penn Treebank sample, repairs, parsing_wsj's
data paths."""

import os
import shutil

import pytest

from t2t_keras import registry
from t2t_keras import trees
from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate

SAMPLE = os.path.join("ptb", "nltk_treebank_sample", "wsj_0001-0179")


def sample_trees(shared_data):
  return list(trees.read_trees(os.path.join(shared_data, SAMPLE + ".trees")))


def test_every_sample_tree_round_trips(shared_data):
  lines = sample_trees(shared_data)
  assert len(lines) == 3669
  for line in lines:
    tree = trees.normalize(trees.parse(line))
    words, tokens = trees.linearize(tree)
    assert trees.delinearize(tokens, words) == tree, line


def test_normalization_and_linearization_by_hand():
  text = ("( (S (NP-SBJ-1 (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog)) "
          "(S (NP-SBJ (-NONE- *-1)))) (. .)))")
  tree = trees.normalize(trees.parse(text))
  assert trees.to_string(tree) == (
      "(S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .))")
  words, tokens = trees.linearize(tree)
  assert words == ["John", "has", "a", "dog", "."]
  assert " ".join(tokens) == "(S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S"
  assert trees.strip_label("-LRB-") == "-LRB-"
  assert trees.strip_label("PP-LOC=2") == "PP"


def test_delinearize_repairs_bad_output():
  words = ["John", "has", "a", "dog", "."]
  # Unclosed brackets are closed; a stray closer is dropped.
  tree = trees.delinearize("(S (NP NNP )NP )NP (VP VBZ (NP DT NN".split(),
                           words)
  assert trees.words(tree) == words
  assert trees.to_string(tree).count("(") == trees.to_string(tree).count(")")
  # Too few tags: the rest of the words get XX; too many: extras dropped.
  short = trees.delinearize("(S NNP VBZ )S".split(), words)
  assert trees.words(short) == words and "(XX dog)" in trees.to_string(short)
  long = trees.delinearize(("(S " + "NN " * 9 + ")S").split(), words)
  assert trees.words(long) == words
  assert trees.words(trees.delinearize([], words)) == words


def test_parsing_problem_round_trips_through_records(shared_data, tmp_path):
  data_dir = str(tmp_path / "data")
  log = []
  generate("parsing_wsj", data_dir, raw_dir=shared_data,
           raw_prefixes=f"train={SAMPLE},dev={SAMPLE}", vocab_size=2000,
           log=log.append)
  problem = registry.problem("parsing_wsj")
  vocab = problem.vocab(data_dir)
  lines = sample_trees(shared_data)
  # Every bracket token of a linearized tree is one piece ("(NP", not "("
  # and "NP"), so the output has one id per token.
  _, tokens = trees.linearize(trees.normalize(trees.parse(lines[0])))
  assert len(vocab.encode(" ".join(tokens))) == len(tokens)
  for example, line in zip(problem.examples("dev", data_dir), lines[:200]):
    sentence = vocab.decode(example["inputs"].numpy())
    output = vocab.decode(example["targets"].numpy())
    gold = trees.to_string(trees.normalize(trees.parse(line)))
    assert problem.output_to_tree(output, sentence) == gold
  assert problem.decode_defaults == {"beam_size": 21, "alpha": 0.3,
                                     "extra_length": 300}


def test_mrg_files_split_by_section(shared_data, tmp_path):
  lines = sample_trees(shared_data)
  raw = tmp_path / "wsj"
  for section, start in (("02", 0), ("21", 10), ("22", 20), ("23", 30)):
    folder = raw / section
    folder.mkdir(parents=True)
    (folder / f"wsj_{section}01.mrg").write_text(
        "\n".join(lines[start:start + 10]) + "\n")
  data_dir = str(tmp_path / "data")
  generate("parsing_wsj", data_dir, raw_dir=str(raw), vocab_size=600,
           log=lambda _: None)
  problem = registry.problem("parsing_wsj")
  counts = {s: sum(1 for _ in problem.examples(s, data_dir))
            for s in ("train", "dev", "test")}
  assert counts == {"train": 20, "dev": 10, "test": 10}
  shutil.rmtree(raw / "22")
  with pytest.raises(CorpusError, match="no dev trees"):
    generate("parsing_wsj", str(tmp_path / "other"), raw_dir=str(raw),
             log=lambda _: None)
