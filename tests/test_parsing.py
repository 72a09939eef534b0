"""Trees: the round trip on the Penn Treebank sample, repairs, parsing_wsj's
data paths."""

import os
import shutil

import pytest

from t2t_keras import registry
from t2t_keras.parsing import trees
from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate
from t2t_keras.parsing.tree_constraint import MAX_OPENS

SAMPLE = os.path.join("ptb", "nltk_treebank_sample", "wsj_0001-0179")


def sample_trees(shared_data):
  return [text for _, text in
          trees.read_trees(os.path.join(shared_data, SAMPLE + ".trees"))]


def test_every_sample_tree_round_trips(shared_data):
  lines = sample_trees(shared_data)
  assert len(lines) == 3669
  most_opens = 0
  for line in lines:
    tree = trees.normalize(trees.parse(line))
    words, tokens = trees.linearize(tree)
    assert trees.delinearize(tokens, words) == tree, line
    _, in_order = trees.linearize(tree, "tags", order="in-order")
    assert trees.delinearize(in_order, words, order="in-order") == tree, line
    assert trees.well_formed(in_order, words, order="in-order"), line
    opens = 0     # opened since the last leaf: the constraint's max_opens
    for token in in_order:
      opens = 0 if not trees.is_bracket(token) else opens + (
          not trees.is_close(token))
      most_opens = max(most_opens, opens)
  assert most_opens <= MAX_OPENS


def test_tree_files_are_read_tree_by_tree(shared_data, tmp_path):
  """A tree a bracket short, a bracket too many, a Latin-1 byte: each is
  one skipped tree, never merged with the trees after it nor carried into
  a pair (the tree on the line with a ")" too many is skipped with it);
  .mrg trees over several indented lines still read whole."""
  good = sample_trees(shared_data)[:8]
  lines = list(good)
  lines[2] = lines[2][:-1]                        # one ")" too few
  lines[5] = lines[5] + ")"                       # one too many
  path = tmp_path / "broken.trees"
  path.write_bytes(("\n".join(lines[:7]) + "\n").encode("utf-8") +
                   lines[7].replace("(", "(\xe9", 1).encode("latin-1") +
                   b"\n")
  read = list(trees.read_trees(str(path)))
  assert [n for n, _ in read] == [1, 2, 3, 4, 5, 6, 7, 8]
  texts = [t for _, t in read]
  assert texts[:2] == good[:2] and texts[3:5] == good[3:5]
  assert texts[2] is None and texts[5] is None and texts[7] is None
  assert texts[6] == good[6]
  # Two trees on one line, or text after a tree: that line is one fault.
  two = tmp_path / "two.trees"
  two.write_text(good[0] + " " + good[1] + "\n" + good[2] + " x\n" +
                 good[3] + "\n", encoding="utf-8")
  assert [t for _, t in trees.read_trees(str(two))] == [None, None, good[3]]
  mrg = tmp_path / "wsj_0101.mrg"
  mrg.write_text("( (S\n    (NP (DT The) (NN dog))\n    (VP (VBZ barks)))"
                 ")\n( (S (NP (PRP It)) (VP (VBD ran))))\n", encoding="utf-8")
  assert [t for _, t in trees.read_trees(str(mrg))] == [
      "( (S (NP (DT The) (NN dog)) (VP (VBZ barks))))",
      "( (S (NP (PRP It)) (VP (VBD ran))))"]
  # Through datagen: the 5 good trees are the pairs, 3 trees skipped.
  raw = tmp_path / "raw"
  raw.mkdir()
  (raw / "train.trees").write_bytes(path.read_bytes())
  (raw / "dev.trees").write_text("\n".join(good) + "\n", encoding="utf-8")
  said = []
  generate("parsing_wsj", str(tmp_path / "data"), raw_dir=str(raw),
           raw_prefixes="train=train,dev=dev", vocab_size=1000,
           log=said.append)
  problem = registry.problem("parsing_wsj")
  assert sum(1 for _ in problem.examples("train", str(tmp_path / "data"))) \
      == 5
  assert any("3 " in s and "skipped" in s for s in said), said


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
  problem = registry.problem("parsing_wsj").for_data(data_dir)
  assert problem.order == "in-order"   # parsing_wsj's default, recorded
  vocab = problem.vocab(data_dir)
  lines = sample_trees(shared_data)
  # Every bracket token is one piece ("(NP", not "(" and "NP"), those of
  # labels the training trees lack (WHADJP is only in dev here) too.
  for label in ("NP", "VP", "WHADJP", "RRC"):
    assert len(vocab.encode(f"({label} )" + label)) == 2
  for example, line in zip(problem.examples("dev", data_dir), lines[:200]):
    sentence = vocab.decode(example["inputs"].numpy())
    output = vocab.decode(example["targets"].numpy())
    gold = trees.normalize(trees.parse(line))
    assert trees.well_formed(output.split(), sentence.split(), "words",
                             "in-order")
    assert not problem.repaired(output, sentence)
    # The written tree has the gold brackets, placeholder tags.
    assert problem.postprocess(output, sentence) == trees.to_string(
        trees.delinearize(trees.linearize(gold, "xx")[1], trees.words(gold),
                          tags=False))
  # Validation F1: the references, written as trees, score 100 against the
  # gold trees datagen wrote beside the shards.
  examples = list(problem.examples("dev", data_dir).take(50))
  sources = [vocab.decode(e["inputs"].numpy()) for e in examples]
  outputs = [problem.postprocess(vocab.decode(e["targets"].numpy()), s)
             for e, s in zip(examples, sources)]
  assert problem.dev_score(outputs, None, sources, data_dir) == 100.0
  assert problem.dev_score(outputs[1:] + outputs[:1], None, sources,
                           data_dir) < 100.0
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


def test_linearizations_and_well_formedness():
  tree = trees.normalize(trees.parse(
      "( (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))"))
  words = ["John", "has", "a", "dog", "."]
  expected = {"words": "(S (NP John )NP (VP has (NP a dog )NP )VP . )S",
              "xx": "(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S",
              "tags": "(S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S"}
  for leaves, text in expected.items():
    assert trees.linearize(tree, leaves) == (words, text.split())
    assert trees.well_formed(text.split(), words, leaves)
  for bad in ("(S (NP John )NP (VP has (NP a dog )NP )VP )S",   # a word short
              "(S (NP John )VP (VP has (NP a dog )NP )VP . )S",  # wrong label
              "(S (NP )NP John has a dog . )S",                  # empty NP
              "(S John has )S (S a dog . )S",                    # two roots
              "(S (NP John )NP has a cat . )S"):                 # not a word
    assert not trees.well_formed(bad.split(), words, "words"), bad
  with pytest.raises(trees.TreeError, match="leaves must be one of"):
    trees.linearize(tree, "pos")
  # Bare closing brackets: the label is the open bracket's.
  bare = "(S (NP John ) (VP has (NP a dog ) ) . )".split()
  assert trees.linearize(tree, "words", close_labels=False) == (words, bare)
  assert trees.well_formed(bare, words, "words")
  assert trees.delinearize(bare, words, tags=False) == trees.delinearize(
      expected["words"].split(), words, tags=False)
  for bad in ("(S (NP John ) (VP has (NP a dog ) ) )",          # a word short
              "(S (NP ) John has a dog . )",                     # empty NP
              "(S (NP John ) (VP has (NP a dog ) ) . ) )"):      # one too many
    assert not trees.well_formed(bad.split(), words, "words"), bad
  # In order: a constituent's first child comes before its bracket.
  in_order = "John (NP )NP (S has (VP a (NP dog )NP )VP . )S".split()
  assert trees.linearize(tree, "words", order="in-order") == (words,
                                                               in_order)
  assert trees.well_formed(in_order, words, "words", "in-order")
  assert not trees.well_formed(in_order, words, "words")     # not top-down
  assert trees.delinearize(in_order, words, tags=False,
                           order="in-order") == trees.delinearize(
                               expected["words"].split(), words, tags=False)
  for bad in ("John (NP )NP (S has (VP a (NP dog )NP )VP )S",    # a word short
              "John (NP )VP (S has (VP a (NP dog )NP )VP . )S",  # wrong label
              "(NP John )NP (S has (VP a (NP dog )NP )VP . )S",  # empty start
              "John has (S (VP a (NP dog )NP )VP . )S",          # two tops
              "John (NP )NP (S has (VP (NP a dog )NP )VP . )S",  # no 1st child
              "John (NP )NP (S has (VP a (NP dog )NP )VP )S .",  # word at top
              "John (NP )NP (S has (VP a (NP dog )NP )VP . )S (X"):  # open
    assert not trees.well_formed(bad.split(), words, "words",
                                 "in-order"), bad
  assert not trees.well_formed(["John"], ["John"], "words", "in-order")
  assert trees.well_formed("John (NP )NP".split(), ["John"], "words",
                           "in-order")
  # Repairs: an opening bracket with nothing just completed starts empty;
  # what is left open is closed; every word is kept.
  repaired = trees.delinearize("(S John (NP has a".split(), words,
                               tags=False, order="in-order")
  assert trees.words(repaired) == words
  with pytest.raises(trees.TreeError, match="order must be one of"):
    trees.linearize(tree, "words", order="bottom-up")


def test_craft_labels_are_spliced_into_wsj_labels():
  caption = trees.normalize(trees.parse(
      "( (CAPTION (NP (NML (NN Complex) (NN trait)) (NN analysis)) "
      "(CIT (-LRB- -LRB-) (CD 1) (-RRB- -RRB-)) (. .)))"))
  assert trees.to_string(caption) == (
      "(FRAG (NP (NN Complex) (NN trait) (NN analysis)) (-LRB- -LRB-) "
      "(CD 1) (-RRB- -RRB-) (. .))")
  heading = trees.normalize(trees.parse("( (HEADING (NP (NN Abstract))))"))
  assert trees.to_string(heading) == "(NP (NN Abstract))"
  word = trees.normalize(trees.parse("( (HEADING (NN Footnotes)))"))
  assert trees.to_string(word) == "(FRAG (NN Footnotes))"
  assert trees.normalize(trees.parse("(ADVP|PRT (RB up))"))[0] == "ADVP"


def test_treebanks_mix_by_weight(shared_data, tmp_path):
  lines = sample_trees(shared_data)
  raw = tmp_path / "raw"
  raw.mkdir()
  (raw / "wsj.trees").write_text("\n".join(lines[:30]) + "\n")
  (raw / "craft.trees").write_text(
      "( (HEADING (NP (NN Abstract))))\n" * 5 +
      "( (S (NP (NML (NN gene) (NN expression))) (VP (VBZ rises)) (. .)))\n")
  (raw / "dev.trees").write_text("\n".join(lines[30:40]) + "\n")
  data_dir = str(tmp_path / "data")
  generate("parsing_wsj", data_dir, raw_dir=str(raw),
           raw_prefixes="train=wsj:1,craft:2,dev=dev", vocab_size=600,
           log=lambda _: None)
  problem = registry.problem("parsing_wsj")
  vocab = problem.vocab(data_dir)
  targets = {vocab.decode(e["targets"].numpy())
             for e in problem.examples("train", data_dir).take(200)}
  # The brackets in order, parsing_wsj's default.
  assert "gene (NP expression )NP (S rises (VP )VP . )S" in targets
  assert "Abstract (NP )NP" in targets
  assert not any("NML" in t or "HEADING" in t for t in targets)


def test_linearization_is_recorded_and_a_mismatch_refused(shared_data,
                                                         tmp_path):
  """parsing_wsj's tree options live in the data directory: every command
  reads them back, and datagen refuses other ones there in one line."""
  from conftest import wsj_sample_data
  from commands import t2t_command
  data = wsj_sample_data(shared_data, tmp_path, "parsing_wsj", 40,
                         order="top-down", leaves="xx")
  problem = registry.problem("parsing_wsj").for_data(data)
  assert (problem.order, problem.leaves, problem.close_labels) == (
      "top-down", "xx", True)
  example = next(iter(problem.examples("train", data)))
  target = problem.vocab(data).decode(example["targets"].numpy())
  assert trees.PAD_TAG in target.split() and target.startswith("(")
  before = sorted(os.listdir(data))
  done = t2t_command("t2t_datagen", "--problem=parsing_wsj",
                     f"--data_dir={data}", f"--raw_data_dir={tmp_path}",
                     "--raw_prefixes=train=sample,dev=sample",
                     "--tree_order=in-order")
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines() == [
      f"error: {data} holds parsing_wsj trees linearized with leaves=xx, "
      "order=top-down, close_labels=True; for --tree_order=in-order use "
      "another --data_dir"], done.stderr[-2000:]
  assert sorted(os.listdir(data)) == before
  # Leaves other than the words need the brackets top-down.
  with pytest.raises(CorpusError, match="--tree_leaves=first needs "
                     "--tree_order=top-down"):
    generate("parsing_wsj", str(tmp_path / "other"), raw_dir=str(tmp_path),
             raw_prefixes="train=sample,dev=sample", leaves="first",
             log=lambda _: None)
  assert not os.path.exists(tmp_path / "other" / "parsing_wsj.shards.json")
