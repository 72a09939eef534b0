"""parsing_wsj: English constituency parsing as translation (section 6.3),
on Penn Treebank trees linearized as in Vinyals & Kaiser et al. 2014."""

import glob
import os
import re

from t2t_keras import registry
from t2t_keras import trees
from t2t_keras.data.corpus import CorpusError, check_file
from t2t_keras.data.sources import Mixture, PairSource
from t2t_keras.data.text_problem import Text2TextProblem

# The standard WSJ split by section.
SECTIONS = {"train": range(2, 22), "dev": (22,), "test": (23,)}
_MRG = re.compile(r"wsj_(\d\d)\d\d\.mrg$")


class TreebankSource(PairSource):
  """Sentence/linearized-tree pairs from treebank files.

  With ``prefixes`` ({split: path prefix in raw_dir}), each split reads
  ``<prefix>.trees`` (one bracketed tree per line) or ``<prefix>.mrg``.
  Without, every ``wsj_SSNN.mrg`` under raw_dir is split by section SS:
  02-21 train, 22 dev, 23 test.
  """

  def __init__(self, raw_dir, prefixes=None):
    if not os.path.isdir(raw_dir):
      raise CorpusError(f"--raw_data_dir {raw_dir} is not a directory")
    self.raw_dir = raw_dir
    self.prefixes = dict(prefixes or {})
    if isinstance(self.prefixes.get("train"), Mixture):
      raise CorpusError("parsing_wsj reads one train prefix; weighted "
                        "corpora ('train=a:0.7,b:0.3') are for text pairs")
    self.langs = ("words", "tree")

  def files(self, split):
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

  def pairs(self, split, skipped=None):
    for path in self.files(split):
      for number, text in enumerate(trees.read_trees(path), 1):
        try:
          tree = trees.normalize(trees.parse(text))
        except trees.TreeError:
          tree = None
        if tree is None:
          if skipped is not None:
            skipped.skip("not a usable tree",
                         f"{os.path.basename(path)} tree {number}")
          continue
        sentence, tokens = trees.linearize(tree)
        yield " ".join(sentence), " ".join(tokens)

  def describe(self):
    return f"treebank files in {self.raw_dir}"


@registry.register_problem
class ParsingWsj(Text2TextProblem):
  """WSJ constituency parsing with a 16K shared vocabulary (section 6.3)."""
  source_lang, target_lang = "words", "tree"
  vocab_size = 16000
  # Every bracket token a single piece: by default SentencePiece splits
  # "(NP" at the change of script into "(" + "NP", which makes a linearized
  # tree 1.6 pieces a token instead of 1.0 (measured on the WSJ sample at
  # 4K and 8K pieces) and leaves the model to count tags across pieces.
  vocab_split_by_script = False
  # Section 6.3: beam 21, alpha 0.3, maximum output length input + 300.
  decode_defaults = {"beam_size": 21, "alpha": 0.3, "extra_length": 300}
  # BLEU of linearized trees is not the task's measure (EVALB F1 is); dev
  # loss picks the best checkpoint.
  validation_bleu = False

  def source(self, tmp_dir=None, raw_dir=None, raw_prefixes=None):
    del tmp_dir
    if not raw_dir:
      raise CorpusError("parsing_wsj reads local treebank files: give "
                        "--raw_data_dir (the Penn Treebank is not "
                        "downloadable)")
    return TreebankSource(raw_dir, raw_prefixes)

  def postprocess(self, output, sentence):
    """What t2t-decoder writes: the predicted tree, repaired."""
    return self.output_to_tree(output, sentence)

  @staticmethod
  def output_to_tree(output, sentence):
    """A predicted linearized tree (str) and the input sentence (str) -> a
    bracketed tree string, unbalanced brackets repaired."""
    tree = trees.delinearize(output.split(), sentence.split())
    return trees.to_string(tree)
