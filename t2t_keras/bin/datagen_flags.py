"""Flags of t2t-datagen, shared with t2t-trainer --generate_data."""

from absl import flags

from t2t_keras.bin import common

flags.DEFINE_string("tmp_dir", None,
                    "Downloads go here (default: <system tmp>/t2t_datagen).")
flags.DEFINE_string("raw_data_dir", None,
                    "Local parallel text instead of a download: "
                    "train.<lang>, dev.<lang>, test.<lang>.")
flags.DEFINE_string("raw_prefixes", "",
                    "Other file prefixes in --raw_data_dir, e.g. "
                    "'train=multi30k/train,dev=wmt14/newstest2013'; several "
                    "weighted train corpora mix by sampling at training "
                    "time: 'train=europarl:0.7,news:0.3,dev=newstest2013'.")
flags.DEFINE_integer("vocab_byte_budget", 1_000_000,
                     "Bytes of each language's training text sampled to "
                     "build the vocabulary (0: all of it).")
flags.DEFINE_string("source_lang", None, "Source file suffix (translate_local).")
flags.DEFINE_string("target_lang", None, "Target file suffix (translate_local).")
flags.DEFINE_float("bpe_dropout", None,
                   "BPE-dropout (Provilkov et al. 2020): also write copies of "
                   "the training pairs, each segmented with every merge "
                   "skipped with this probability (0.1 in the paper); "
                   "training reads them one after another. Default: none.")
flags.DEFINE_integer("bpe_dropout_copies", None,
                     "How many BPE-dropout copies (default 40); training "
                     "starts again at the first after the last.")
flags.DEFINE_boolean("lowercase", None,
                     "Lowercase all text: the vocabulary does it (str.lower), "
                     "so training, decoding and export all see lowercase; "
                     "the small-data papers' setting (Multi30k). Default: "
                     "keep the case.")
flags.DEFINE_enum("tree_order", None, ["in-order", "top-down"],
                  "parsing_wsj: the brackets in order (the default) or "
                  "top-down; recorded in --data_dir.")
flags.DEFINE_enum("tree_leaves", None, ["words", "first", "xx", "tags"],
                  "parsing_wsj: the tree's leaves: the words (the default), "
                  "each word's first piece, XX placeholders or "
                  "part-of-speech tags (the last three top-down only); "
                  "recorded in --data_dir.")
flags.DEFINE_boolean("tree_close_labels", None,
                     "parsing_wsj: closing brackets carry their label "
                     "(the default); --notree_close_labels: a bare ')' "
                     "(top-down only). Recorded in --data_dir.")
flags.DEFINE_boolean("overwrite", False,
                     "Make this problem's data in --data_dir again (a data "
                     "dir made from other raw files is refused without "
                     "it): made and checked in a hidden staging folder, "
                     "then swapped in for the old, which stays if anything "
                     "fails or the command is stopped.")
common.define("vocab_size")

# The flags above: what datagen reads besides --problem and --data_dir.
NAMES = frozenset({"tmp_dir", "raw_data_dir", "raw_prefixes",
                   "vocab_byte_budget", "source_lang", "target_lang",
                   "bpe_dropout", "bpe_dropout_copies", "lowercase",
                   "tree_order", "tree_leaves", "tree_close_labels",
                   "vocab_size", "overwrite"})


def generate_from_flags(problem, data_dir):
  """Runs datagen for ``problem`` with these flags' values."""
  from t2t_keras.data.datagen import generate
  f = flags.FLAGS
  return generate(problem, data_dir, tmp_dir=f.tmp_dir,
                  raw_dir=f.raw_data_dir, raw_prefixes=f.raw_prefixes,
                  byte_budget=f.vocab_byte_budget, source_lang=f.source_lang,
                  target_lang=f.target_lang, vocab_size=f.vocab_size,
                  bpe_dropout=f.bpe_dropout,
                  bpe_dropout_copies=f.bpe_dropout_copies,
                  lowercase=f.lowercase, overwrite=f.overwrite,
                  order=f.tree_order,
                  leaves=f.tree_leaves, close_labels=f.tree_close_labels)
