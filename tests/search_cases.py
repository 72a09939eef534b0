"""The searches that tests/test_jax_search.py runs on both backends: the
same models (weights saved by the TensorFlow side, loaded by the JAX side),
the same inputs, prefixes and constraints. Imported by the test (under
TensorFlow) and by jax_search_check.py (under KERAS_BACKEND=jax)."""

import numpy as np

import t2t_keras
from t2t_keras.decoding.searches.constraints import PrefixConstraint
from t2t_keras.parsing.inorder_constraint import InOrderTreeConstraint
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.parsing.tree_constraint import TreeConstraint

# A small parsing vocabulary: brackets, words, a placeholder leaf.
PIECES = ["<pad>", "<EOS>", "\u2581(S", "\u2581)S", "\u2581(NP", "\u2581)NP",
          "\u2581(VP", "\u2581)", "\u2581the", "\u2581dog", "s", "\u2581see",
          "\u2581a", "\u2581cat", "\u2581", "x", "\u2581XX", "\u2581run",
          "ing", "\u2581big"]
VOCAB = len(PIECES)
MODELS = ("transformer", "transformer_relative", "transformer_rotary")
WORD_STARTS = [p.startswith("\u2581") for p in PIECES]

# name: (decode hparams, constraint: None, "prefix", "tree", "first_piece",
# "placeholder" or "inorder")
SEARCHES = {
    "beam_nbest": ("beam_size=4,return_beams=True,extra_length=6", None),
    "beam_reward": ("beam_size=3,length_reward=0.3,extra_length=6", None),
    "greedy": ("beam_size=1,extra_length=6", None),
    "beam_prefix": ("beam_size=4,extra_length=6", "prefix"),
    "greedy_prefix": ("beam_size=1,extra_length=6", "prefix"),
    "beam_tree": ("beam_size=4,alpha=0.3,extra_length=6", "tree"),
    "beam_first_piece": ("beam_size=3,extra_length=6", "first_piece"),
    "greedy_placeholder": ("beam_size=1,extra_length=6", "placeholder"),
    "beam_inorder": ("beam_size=4,extra_length=6", "inorder"),
}


def cases():
  """(model, search) pairs: every search on the transformer; the
  unconstrained and prefixed ones on its relative and rotary variants."""
  for model_name in MODELS:
    for name in SEARCHES:
      if model_name == "transformer" or name in ("beam_nbest", "greedy",
                                                 "beam_prefix"):
        yield model_name, name


def build(model_name):
  """The case's model, built (weights random until loaded)."""
  return t2t_keras.build_model(
      model_name + "_tiny", vocab_size=VOCAB, model=model_name,
      hparams_overrides="hidden_size=32,filter_size=64,num_heads=4")


def batch():
  """(inputs int32 [5, 7], prefixes int32 [5, 3]): words of the
  vocabulary, rows of several lengths; prefixes of several lengths, one
  empty."""
  rng = np.random.RandomState(3)
  inputs = rng.randint(8, VOCAB, size=(5, 7)).astype("int32")
  inputs[:, -1] = 1
  inputs[1, 3], inputs[1, 4:] = 1, 0
  inputs[3, 1], inputs[3, 2:] = 1, 0
  prefixes = rng.randint(8, VOCAB, size=(5, 3)).astype("int32")
  prefixes[2] = 0
  prefixes[4, 1:] = 0
  return inputs, prefixes


def options(name):
  return decode_hparams(SEARCHES[name][0])


def constraint(name, prefixes=None):
  """The case's constraint (a prefix one over ``prefixes``), or None."""
  kind = SEARCHES[name][1]
  if kind == "prefix":
    return PrefixConstraint(prefixes, WORD_STARTS)
  return {None: lambda: None,
          "tree": lambda: TreeConstraint(PIECES),
          "first_piece": lambda: TreeConstraint(PIECES, first_piece=True),
          "placeholder": lambda: TreeConstraint(PIECES,
                                                leaf_piece="\u2581XX"),
          "inorder": lambda: InOrderTreeConstraint(PIECES)}[kind]()
