"""The in-order tree constraint by itself: random walks over what it allows
are well-formed in-order trees over the input words, and a gold tree is
allowed at every step."""

import numpy as np
import tensorflow as tf

from t2t_keras.parsing import trees
from t2t_keras.parsing.inorder_constraint import InOrderTreeConstraint
from t2t_keras.ids import EOS_ID

PIECES = ["<pad>", "<EOS>", "\u2581(S", "\u2581)S", "\u2581(NP", "\u2581)NP",
          "\u2581(VP", "\u2581)VP", "\u2581John", "\u2581has", "\u2581a",
          "\u2581do", "g", "\u2581."]
WORDS = "John has a dog .".split()
SOURCE = [8, 9, 10, 11, 12, 13, EOS_ID]       # the words' pieces, then EOS


def _text(ids):
  """Pieces -> the tokens of a linearized tree."""
  pieces = [PIECES[i] for i in ids if i != EOS_ID]
  return "".join(pieces).replace("\u2581", " ").split()


def _walk(constraint, hypotheses, limit, choose):
  """Steps ``hypotheses`` copies of SOURCE through the constraint, each
  step's token ``choose(step, allowed bool [n, vocab])``; returns the
  outputs (ids up to EOS) and the allowed masks seen."""
  state = constraint.start(tf.constant([SOURCE]), hypotheses)
  limits = tf.maximum(tf.fill([hypotheses], limit),
                      constraint.min_limits(state))
  done = np.zeros([hypotheses], bool)
  outputs = [[] for _ in range(hypotheses)]
  for step in range(int(tf.reduce_max(limits))):
    allowed = constraint.allowed(state, step, limits, len(PIECES)).numpy()
    tokens = choose(step, allowed)
    for row, token in enumerate(tokens):
      if not done[row]:
        assert allowed[row, token], (row, step, outputs[row])
        outputs[row].append(int(token))
        done[row] |= token == EOS_ID
    if done.all():
      break
    state = constraint.advance(state, tf.constant(tokens, tf.int32))
  return outputs, done


def test_random_walks_are_in_order_trees_over_the_words():
  rng = np.random.default_rng(0)
  constraint = InOrderTreeConstraint(PIECES)
  for limit in (9, 14, 40):                  # 9: raised to leaves + 3
    outputs, done = _walk(
        constraint, 64, limit,
        lambda step, allowed: [rng.choice(np.flatnonzero(row))
                               for row in allowed])
    assert done.all()
    for ids in outputs:
      assert len(ids) <= max(limit, len(SOURCE) - 1 + 3)
      tokens = _text(ids)
      assert trees.well_formed(tokens, WORDS, "words", "in-order"), tokens
      assert trees.words(trees.delinearize(
          tokens, WORDS, tags=False, order="in-order")) == WORDS


def test_a_gold_tree_is_allowed_at_every_step():
  gold = "John (NP )NP (S has (VP a (NP dog )NP )VP . )S".split()
  at = gold.index("dog")                          # two pieces: "\u2581do" "g"
  ids = ([PIECES.index("\u2581" + t) for t in gold[:at]] + [11, 12] +
         [PIECES.index("\u2581" + t) for t in gold[at + 1:]] + [EOS_ID])
  outputs, done = _walk(InOrderTreeConstraint(PIECES), 1, 40,
                        lambda step, allowed: [ids[step]])
  assert done.all() and outputs[0] == ids
  # Top-down is not allowed: the first token must be the first word.
  state = InOrderTreeConstraint(PIECES).start(tf.constant([SOURCE]), 1)
  first = InOrderTreeConstraint(PIECES).allowed(
      state, 0, tf.constant([40]), len(PIECES)).numpy()[0]
  assert np.flatnonzero(first).tolist() == [8]
