"""parsing_wsj: English constituency parsing as translation (section 6.3),
on Penn Treebank trees linearized with the brackets in order and the words
themselves as leaves, decoded under a constraint that makes every output a
tree over exactly the input words.

Other linearizations are datagen options (``TREE_OPTIONS``), recorded in
the data directory (datagen's manifest, ``<data_name>.shards.json``, as
BPE-dropout's settings are) and read back by every
command that reads it: ``--tree_order=top-down`` (Vinyals & Kaiser et al.
2014's order), ``--tree_leaves=first`` (each word's first subword piece),
``xx`` (Vinyals et al.'s XX placeholders) or ``tags`` (part-of-speech tags,
no decoding constraint; the last three top-down only), and
``--notree_close_labels`` (a bare ")" closes any label)."""

import glob
import os
import re

from t2t_keras import registry

from t2t_keras.parsing import trees
from t2t_keras.data.corpus import CorpusError, check_file
from t2t_keras.data.sources import Mixture, PairSource
from t2t_keras.data.text_problem import DEFAULT_BYTE_BUDGET, Text2TextProblem
from t2t_keras.parsing.inorder_constraint import InOrderTreeConstraint
from t2t_keras.parsing.tree_constraint import (WORD_START, TreeConstraint,
                                                first_pieces)
from t2t_keras.ids import EOS_ID
from t2t_keras.io import files
from t2t_keras.io.logs import log_line
from t2t_keras.parsing import evalb

# The standard WSJ split by section.
SECTIONS = {"train": range(2, 22), "dev": (22,), "test": (23,)}
# The Penn Treebank's phrase labels (Bies et al. 1995): bracket pieces even
# for a label that only dev or test trees use.
PTB_LABELS = ("ADJP ADVP CONJP FRAG INTJ LST NAC NP NX PP PRN PRT QP RRC S "
              "SBAR SBARQ SINV SQ UCP VP WHADJP WHADVP WHNP WHPP X").split()
_MRG = re.compile(r"wsj_(\d\d)\d\d\.mrg$")


class TreebankSource(PairSource):
  """Sentence/linearized-tree pairs from treebank files.

  With ``prefixes`` ({split: path prefix in raw_dir}), each split reads
  ``<prefix>.trees`` (one bracketed tree per line) or ``<prefix>.mrg``; the
  train split may mix weighted treebanks ("train=wsj:1,craft:2", a
  ``Mixture``), each becoming its own source in ``mixture``.
  Without, every ``wsj_SSNN.mrg`` under raw_dir is split by section SS:
  02-21 train, 22 dev, 23 test. ``leaves``, ``close_labels``, ``order``:
  see ``trees.linearize``.
  """

  def __init__(self, raw_dir, prefixes=None, leaves="words",
               close_labels=True, order="top-down"):
    if not os.path.isdir(raw_dir):
      raise CorpusError(f"--raw_data_dir {raw_dir} is not a directory")
    self.raw_dir, self.leaves = raw_dir, leaves
    self.close_labels, self.order = close_labels, order
    self.prefixes = dict(prefixes or {})
    self.langs = ("words", "tree")
    self.mixture = None
    if isinstance(self.prefixes.get("train"), Mixture):
      self.mixture = [
          (TreebankSource(raw_dir, dict(self.prefixes, train=prefix), leaves,
                          close_labels, order), prefix, weight)
          for prefix, weight in self.prefixes["train"]]

  def raw_files(self):
    """Every tree file of every split that is there (what datagen records
    the data directory was made from)."""
    found = []
    for split in ("train", "dev", "test"):
      try:
        found += self.files(split)
      except CorpusError:
        pass   # a missing file: the split's own check names it
    return found

  def files(self, split):
    if split == "train" and self.mixture:
      return [f for part, _, _ in self.mixture for f in part.files(split)]
    if self.prefixes:
      if split not in self.prefixes:
        return []
      base = os.path.join(self.raw_dir, self.prefixes[split])
      found = [p for p in (base + ".trees", base + ".mrg", base)
               if os.path.isfile(p)]
      return [check_file(found[0] if found else base + ".trees")]
    mrg = sorted(glob.glob(os.path.join(self.raw_dir, "**", "wsj_*.mrg"),
                           recursive=True))
    return [p for p in mrg if _MRG.search(p) and
            int(_MRG.search(p).group(1)) in SECTIONS[split]]

  def has_split(self, split):
    return bool(self.files(split))

  def check(self, splits):
    for split in ("train", "dev"):
      if not self.files(split):
        raise CorpusError(
            f"no {split} trees in {self.raw_dir}: give wsj_SSNN.mrg files "
            "(sections 02-21 train, 22 dev, 23 test) or name one-tree-per-line "
            "files with --raw_prefixes=train=PATH,dev=PATH,test=PATH")
    del splits

  def trees(self, split, skipped=None):
    """The split's normalized trees, unusable ones counted in ``skipped``."""
    for path in self.files(split):
      for number, text in trees.read_trees(path):
        try:
          tree = text and trees.normalize(trees.parse(text))
        except trees.TreeError:
          tree = None
        if not tree:
          if skipped is not None:
            skipped.skip("not a usable tree" if text else
                         "not a tree (unbalanced brackets or not UTF-8)",
                         f"{os.path.basename(path)} line {number}")
          continue
        yield tree

  def pairs(self, split, skipped=None):
    for tree in self.trees(split, skipped):
      sentence, tokens = trees.linearize(tree, self.leaves,
                                         self.close_labels, self.order)
      yield " ".join(sentence), " ".join(tokens)

  def describe(self):
    return f"treebank files in {self.raw_dir}"


# The linearization options of parsing_wsj, as datagen records them.
TREE_OPTIONS = ("leaves", "order", "close_labels")


@registry.register_problem
class ParsingWsj(Text2TextProblem):
  """WSJ constituency parsing with a 16K shared vocabulary (section 6.3):
  the brackets in order, the words as leaves (see the module docstring for
  the other linearizations)."""
  source_lang, target_lang = "words", "tree"
  # The brackets in order: a constituent's first child, then its opening
  # bracket, then the rest (``John (NP )NP (S has (VP a (NP dog )NP )VP .
  # )S``), so a label is chosen after the first word or phrase under it
  # has been read, as Liu & Zhang 2017's in-order transition system does.
  # "top-down" is Vinyals & Kaiser et al. 2014's order.
  order = "in-order"
  leaves = "words"            # or "first", "xx", "tags" (top-down only)
  close_labels = True         # ")NP"; False: a bare ")" closes any label
  OPTIONS = Text2TextProblem.OPTIONS + TREE_OPTIONS
  vocab_size = 16000
  # Every bracket token a single piece: by default SentencePiece splits
  # "(NP" at the change of script into "(" + "NP", which makes a linearized
  # tree 1.6 pieces a token instead of 1.0 (measured on the WSJ sample at
  # 4K and 8K pieces) and leaves the model to count tags across pieces.
  vocab_split_by_script = False
  # Section 6.3: beam 21, alpha 0.3, maximum output length input + 300.
  decode_defaults = {"beam_size": 21, "alpha": 0.3, "extra_length": 300}
  # Hypotheses keep the model's own log-probabilities under the tree
  # constraint (a forced word costs what the model gives it), so beam search
  # prefers bracketings after which the model expects the input's next word.
  # Chosen on dev F1 over renormalizing among the allowed tokens
  # (docs/experiments.md, the parsing table).
  constraint_renormalize = False
  # The trainer decodes dev (constrained greedy search: beam 1) at each
  # evaluation and keeps the checkpoint of the best EVALB F1.
  validation_bleu = True
  validation_metric = "f1"
  eval_decode_defaults = {"beam_size": 1}

  # -- the linearization options, recorded in data_dir -----------------------
  def tree_options(self):
    return {key: getattr(self, key) for key in TREE_OPTIONS}

  def _check_options(self):
    if self.leaves not in trees.LEAVES:
      raise CorpusError(f"--tree_leaves={self.leaves}: expected one of "
                        f"{', '.join(trees.LEAVES)}")
    if self.order not in trees.ORDERS:
      raise CorpusError(f"--tree_order={self.order}: expected one of "
                        f"{', '.join(trees.ORDERS)}")
    if self.order == "in-order" and self.leaves != "words":
      raise CorpusError(f"--tree_leaves={self.leaves} needs "
                        "--tree_order=top-down: the brackets in order have "
                        "the words as leaves")
    if self.order == "in-order" and not self.close_labels:
      raise CorpusError("--notree_close_labels needs --tree_order=top-down")

  def _recorded(self, data_dir):
    """The options recorded in ``data_dir``'s manifest; None where nothing
    is; a record without every option is a one-line error."""
    recorded = self._read_manifest(data_dir).get("tree_options")
    if recorded is None:
      return None
    if not isinstance(recorded, dict) or set(recorded) != set(TREE_OPTIONS):
      raise CorpusError(f"{self._manifest(data_dir)} is damaged: its "
                        f"tree_options must name {', '.join(TREE_OPTIONS)}; "
                        "run t2t-datagen in a new --data_dir")
    return {key: recorded[key] for key in TREE_OPTIONS}

  def for_data(self, data_dir):
    """This problem with the linearization datagen recorded in
    ``data_dir``; an option given that differs from it is a one-line
    error, and so are data written before options were recorded."""
    if not data_dir:
      return self
    recorded = self._recorded(data_dir)
    if recorded is None:
      if glob.glob(os.path.join(data_dir, f"vocab.{self.data_name}.*")):
        raise CorpusError(
            f"{data_dir} holds {self.data_name} data without its tree "
            "options (written before the linearization was recorded); run "
            "t2t-datagen in a "
            "new --data_dir")
      return self
    given = getattr(self, "configured", {})
    for key, value in recorded.items():
      if key in given and given[key] != value:
        described = ", ".join(f"{k}={v}" for k, v in recorded.items())
        raise CorpusError(
            f"{data_dir} holds {self.data_name} trees linearized with "
            f"{described}; for --tree_{key}={given[key]} use another "
            "--data_dir")
      setattr(self, key, value)
    return self

  def generate_data(self, data_dir, tmp_dir=None, raw_dir=None,
                    raw_prefixes=None, byte_budget=DEFAULT_BYTE_BUDGET,
                    log=log_line):
    """As for text, the linearization checked against and recorded in
    ``data_dir`` first."""
    self.for_data(data_dir)
    self._check_options()
    os.makedirs(data_dir, exist_ok=True)
    manifest = self._read_manifest(data_dir)
    if "tree_options" not in manifest:
      manifest["tree_options"] = self.tree_options()
      self._write_manifest(data_dir, manifest)
    log(f"{self.data_name}: trees linearized with " + ", ".join(
        f"{k}={v}" for k, v in self.tree_options().items()))
    return super().generate_data(data_dir, tmp_dir, raw_dir, raw_prefixes,
                                 byte_budget, log)

  @property
  def copies_source(self):
    """The words as leaves copy every source piece in order."""
    return self.leaves == "words"

  def source(self, tmp_dir=None, raw_dir=None, raw_prefixes=None):
    del tmp_dir
    if not raw_dir:
      raise CorpusError(f"{self.name} reads local treebank files: give "
                        "--raw_data_dir (the Penn Treebank is not "
                        "downloadable)")
    return TreebankSource(raw_dir, raw_prefixes, self.leaves,
                          self.close_labels, self.order)

  # -- vocabulary and examples ---------------------------------------------
  def vocab_symbols(self, source):
    """Every bracket token of the Penn Treebank's labels and of the
    training trees (and the placeholder leaf), kept whole as pieces."""
    found = {"(" + label for tree in source.trees("train")
             for label in _labels(tree)} | {"(" + l for l in PTB_LABELS}
    found |= {trees.CLOSE + (token[1:] if self.close_labels else "")
              for token in found}
    if self.leaves == "xx":
      found.add(trees.PAD_TAG)
    return [WORD_START + token for token in sorted(found)]

  def encode_pair(self, vocab, source, target):
    for token in set(target.split()):
      if trees.is_bracket(token) and len(vocab.encode(token)) != 1:
        raise CorpusError(
            f"the bracket token {token!r} is {len(vocab.encode(token))} "
            f"pieces in this {self.name} vocabulary, not one (a label that "
            "only dev or test trees use?); rebuild the vocabulary in a new "
            "--data_dir")
    return (vocab.encode(source) + [EOS_ID],
            self._leaf_vocab(vocab).encode(target) + [EOS_ID])

  def target_vocab(self, data_dir):
    """``vocab``; under "first" leaves, one whose ``encode`` keeps each
    word's first piece (forced decoding and prefixes encode targets with
    it; the SavedModel's prefixes are encoded whole)."""
    return self._leaf_vocab(self.vocab(data_dir))

  def _leaf_vocab(self, vocab):
    return FirstPieceVocab(vocab) if self.leaves == "first" else vocab

  def write_split(self, source, vocab, data_dir, split, log=log_line,
                  log_every=50_000, name=None):
    """As for text, and the dev and test gold trees (normalized, in shard
    order) to ``gold_path`` for validation F1."""
    skipped = super().write_split(source, vocab, data_dir, split, log,
                                  log_every, name)
    if split in ("dev", "test") and name is None:
      path = self.gold_path(data_dir, split)
      files.write_text(path, "".join(trees.to_string(t) + "\n"
                                     for t in source.trees(split)))
    return skipped

  def gold_path(self, data_dir, split):
    return os.path.join(data_dir, f"{self.data_name}-{split}.trees")

  # -- decoding ------------------------------------------------------------
  def decode_constraint(self, data_dir):
    leaf = WORD_START + trees.PAD_TAG if self.leaves == "xx" else None
    if self.leaves == "tags":
      return None    # any tag may stand for a word: nothing to constrain
    if self.order == "in-order":
      if self.leaves != "words":
        raise CorpusError(f"{self.name}: the in-order constraint copies the "
                          f"words as leaves, not leaves={self.leaves!r}")
      return InOrderTreeConstraint(
          self.vocab(data_dir).all_pieces(),
          renormalize=self.constraint_renormalize)
    return TreeConstraint(self.vocab(data_dir).all_pieces(), leaf,
                          renormalize=self.constraint_renormalize,
                          first_piece=self.leaves == "first")

  def postprocess(self, output, sentence):
    """What t2t-decoder writes: the predicted tree, repaired if need be."""
    tree = trees.delinearize(output.split(), sentence.split(),
                             tags=self.leaves == "tags", order=self.order)
    return trees.to_string(tree)

  def repaired(self, output, sentence):
    return not trees.well_formed(output.split(), sentence.split(),
                                 self.leaves, self.order)

  def dev_score(self, outputs, references, sources, data_dir):
    """EVALB F1 of the predicted trees against the gold dev trees datagen
    wrote (else the references delinearized, punctuation then scored)."""
    path = self.gold_path(data_dir, "dev")
    if os.path.isfile(path):
      with open(path, encoding="utf-8") as f:
        gold = f.read().splitlines()[:len(outputs)]
    else:
      gold = [self.postprocess(r, s) for r, s in zip(references, sources)]
    return evalb.evaluate(gold, outputs)["all"].scores()[2]


class FirstPieceVocab:
  """A ``SubwordVocab`` whose ``encode`` keeps only the pieces
  ``first_pieces`` keeps (every word's first piece, and the brackets); the
  rest is the vocabulary's."""

  def __init__(self, vocab):
    self.vocab = vocab

  def encode(self, text):
    ids = self.vocab.encode(text)
    keep = first_pieces(self.vocab.pieces(ids))
    return [i for i, k in zip(ids, keep) if k]

  def __getattr__(self, name):
    return getattr(self.vocab, name)


def _labels(tree):
  label, children = tree
  if isinstance(children, str):
    return set()
  return {label}.union(*(_labels(c) for c in children))
