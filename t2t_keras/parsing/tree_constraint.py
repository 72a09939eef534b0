"""Parsing's decoding constraint: every output is a well-formed linearized
tree over exactly the input words, in order (``t2t_keras.parsing.trees``).

Tokens are SentencePiece pieces of one shared vocabulary: bracket tokens
("(NP", ")NP" or a bare ")") are single pieces; leaves are either the words
themselves, copied piece by piece from the source (``leaf_piece=None``),
each word's first piece only (``first_piece``: the source's pieces that
``first_pieces`` keeps), or one placeholder piece a word (``leaf_piece``,
e.g. "XX"). At each step a hypothesis may emit

* an opening bracket: at a word boundary, while words are left, inside the
  root (or as the root, at step 0), below ``max_depth``, at most
  ``max_opens`` in a row (brackets opened since the last leaf: no tree of
  the WSJ sample or of CRAFT opens more than 6; without the bound a weak
  model whose favourite token is forbidden opens NP after NP, as its
  renormalized choice), and only if the length budget still leaves room to
  finish after it;
* the closing bracket of the innermost open constituent: at a word
  boundary, if that constituent holds something, and for the root only once
  every word is placed;
* the next leaf: the next source piece (of those kept; inside a word, the
  only choice), or the placeholder;
* EOS: once every word is placed and every bracket closed.

The budget: with ``left`` leaf tokens still to place and ``depth`` brackets
open, finishing takes ``left + depth + 1`` tokens (EOS included), so an
opening bracket is allowed only where ``left + depth + 3`` tokens remain.
The search raises each sentence's length limit to ``leaves + 3`` where it
is smaller (``min_limits``), so a hypothesis can always finish.
"""

import numpy as np
from keras import ops

from t2t_keras.parsing import trees
from t2t_keras.decoding.searches.constraints import (Constraint, one_hot_mask,
                                                     per_hypothesis)
from t2t_keras.decoding.searches.tensor_ops import gather_rows, take
from t2t_keras.ids import EOS_ID, PAD_ID

WORD_START = "\u2581"      # SentencePiece's mark of a word-initial piece
MAX_DEPTH = 64
MAX_OPENS = 6
# The kind of a hypothesis's last token, its state's ``last`` (0: none yet;
# EOS keeps the kind before it).
LEAF, OPEN, CLOSE = 1, 2, 3


def first_pieces(pieces):
  """Which of a sequence's ``pieces`` (str) ``first_piece`` leaves keep:
  every word-initial piece (brackets included) and, after a bare U+2581
  (a word whose first character has no piece of its own), the next piece,
  so that every kept word has visible text. Returns list of bool."""
  return [p.startswith(WORD_START) or (i > 0 and pieces[i - 1] == WORD_START)
          for i, p in enumerate(pieces)]


def vocab_tables(pieces):
  """Per-id tables of a vocabulary's ``pieces`` (str, id order).

  Returns dict of numpy arrays [vocab]: ``close_of`` (int32: for an opening
  bracket whose closing bracket is a piece too, that piece's id, the
  labelled one (")NP") if there is one, else the bare ")"; else -1),
  ``is_close`` (bool), ``word_start`` (bool: begins a word and is no
  bracket).
  """
  index = {piece: i for i, piece in enumerate(pieces)}
  close_of = np.full([len(pieces)], -1, np.int32)
  is_close = np.zeros([len(pieces)], bool)
  word_start = np.zeros([len(pieces)], bool)
  for i, piece in enumerate(pieces):
    if i in (PAD_ID, EOS_ID) or not piece.startswith(WORD_START):
      continue
    token = piece[1:]
    if not trees.is_bracket(token):
      word_start[i] = True
    elif token[0] == "(":
      close_of[i] = index.get(WORD_START + trees.CLOSE + token[1:],
                              index.get(WORD_START + trees.CLOSE, -1))
    else:
      is_close[i] = True
  return {"close_of": close_of, "is_close": is_close,
          "word_start": word_start}


class TreeConstraint(Constraint):
  """Well-formed trees over the input words (see the module docstring).

  Args:
    pieces: the shared vocabulary's pieces (``SubwordVocab.all_pieces``).
    leaf_piece: the placeholder leaf piece (e.g. "\u2581XX"); None: leaves
      copy the input words.
    first_piece: with ``leaf_piece`` None, leaves copy each word's first
      piece only (``first_pieces``), not the whole word.
    max_depth: the deepest nesting allowed.
    max_opens: the most brackets opened in a row (without a leaf between).
    renormalize: True: the model's distribution renormalized over the
      allowed tokens (a forced token costs nothing); False: hypotheses keep
      the model's own log-probabilities (``constraints`` module docstring).
  """

  def __init__(self, pieces, leaf_piece=None, max_depth=MAX_DEPTH,
               max_opens=MAX_OPENS, renormalize=True, first_piece=False):
    self.renormalize, self.first_piece = renormalize, first_piece
    self.tables = vocab_tables(pieces)
    self.bare_id = pieces.index(WORD_START) if WORD_START in pieces else -1
    self.leaf_id = None if leaf_piece is None else pieces.index(leaf_piece)
    self.max_depth, self.max_opens = max_depth, max_opens

  def _table(self, name, vocab):
    """A table as a tensor of ``vocab`` entries (padded with 0 / -1)."""
    return self._lookup(name, ops.arange(vocab))

  def _lookup(self, name, ids):
    """Table ``name``'s entries at ``ids`` (int, any shape): its own entry,
    the fill (-1 / False) past its end. Shapes stay static (XLA)."""
    table = ops.convert_to_tensor(self.tables[name])
    size = len(self.tables[name])
    fill = -1 if name == "close_of" else False
    return ops.where(ids < size, take(table, ops.minimum(ids, size - 1)),
                     fill)

  def start(self, inputs, hypotheses):
    inputs = ops.cast(inputs, "int32")
    real = ops.logical_and(ops.not_equal(inputs, PAD_ID),
                           ops.not_equal(inputs, EOS_ID))
    starts = real & take(ops.convert_to_tensor(self.tables["word_start"]),
                         ops.where(real, inputs, 0))
    if self.leaf_id is None and self.first_piece:
      # The kept pieces (``first_pieces``), moved to the front in order.
      after_bare = ops.pad(ops.equal(inputs, self.bare_id)[:, :-1],
                           ((0, 0), (1, 0)))
      keep = starts | (real & after_bare)
      order = ops.top_k(ops.cast(keep, "int32"),
                        ops.shape(inputs)[1])[1]            # stable
      inputs = gather_rows(inputs, order)
      leaves = ops.sum(ops.cast(keep, "int32"), 1)
    elif self.leaf_id is None:
      leaves = ops.sum(ops.cast(real, "int32"), 1)
    else:   # one placeholder a word: count word-initial pieces
      leaves = ops.sum(ops.cast(starts, "int32"), 1)
    n = ops.shape(inputs)[0] * hypotheses
    return {"source": per_hypothesis(inputs, hypotheses),
            "leaves": per_hypothesis(leaves, hypotheses),
            "placed": ops.zeros((n,), "int32"),
            "depth": ops.zeros((n,), "int32"),
            "stack": ops.zeros((n, self.max_depth), "int32"),
            "last": ops.zeros((n,), "int32"),
            "opens": ops.zeros((n,), "int32")}

  def _next_leaf(self, state):
    """(the next leaf token, whether it begins a word), [n] each."""
    placed = state["placed"]
    if self.leaf_id is not None:
      return (ops.full_like(placed, self.leaf_id),
              ops.ones_like(placed, "bool"))
    source = state["source"]
    at = ops.minimum(placed, ops.shape(source)[1] - 1)
    piece = gather_rows(source, at)
    return piece, self._lookup("word_start", piece)

  def _rules(self, left, depth, opens, fresh, starts_word, step, remaining,
             leaves):
    """The module docstring's rules on int/bool [n] tensors (one step of n
    hypotheses): (may open, may close, may place the next leaf, may
    end)."""
    boundary = ops.equal(left, 0) | starts_word
    may_open = (boundary & (left > 0) & (depth < self.max_depth) &
                (opens < self.max_opens) &
                ((depth > 0) | ops.equal(step, 0)) &
                (left + depth + 3 <= remaining))
    may_close = (boundary & (depth > 0) & ops.logical_not(fresh) &
                 ((depth > 1) | ops.equal(left, 0)))
    may_leaf = (left > 0) & (depth > 0)
    may_end = ((ops.equal(depth, 0) & ops.equal(left, 0) & (step > 0)) |
               ops.equal(leaves, 0))
    return may_open, may_close, may_leaf, may_end

  def _step_rules(self, state, starts_word, step, limits):
    """``_rules`` on a step's state: (may open, may close, may place the
    next leaf, may end), bool [n] each."""
    return self._rules(state["leaves"] - state["placed"], state["depth"],
                       state["opens"], ops.equal(state["last"], OPEN),
                       starts_word, step,
                       limits - step, state["leaves"])

  def allowed(self, state, step, limits, vocab):
    depth = state["depth"]
    piece, starts_word = self._next_leaf(state)
    may_open, may_close, may_leaf, may_end = self._step_rules(
        state, starts_word, step, limits)
    innermost = gather_rows(state["stack"], ops.maximum(depth - 1, 0))
    opens = self._table("close_of", vocab) >= 0
    eos = ops.equal(ops.arange(vocab), EOS_ID)[None, :]
    mask = ((opens[None, :] & may_open[:, None]) |
            (one_hot_mask(innermost, vocab) & may_close[:, None]) |
            (one_hot_mask(piece, vocab) & may_leaf[:, None]) |
            (eos & may_end[:, None]))
    # Never reached from a start the budget allows; EOS rather than nothing.
    stuck = ops.logical_not(ops.any(mask, axis=1))
    return mask | (eos & stuck[:, None])

  def advance(self, state, tokens):
    tokens = ops.cast(tokens, "int32")
    close = self._lookup("close_of", tokens)
    opened = close >= 0
    closed = self._lookup("is_close", tokens)
    piece, _ = self._next_leaf(state)
    leaf = (ops.equal(tokens, piece) & ops.logical_not(opened | closed) &
            (state["placed"] < state["leaves"]))
    depth = state["depth"]
    here = ops.equal(ops.arange(self.max_depth)[None, :], depth[:, None])
    stack = ops.where(here & opened[:, None], close[:, None], state["stack"])
    last = ops.where(opened, OPEN, ops.where(closed, CLOSE, ops.where(
        leaf, LEAF, state["last"])))
    opens = ops.where(leaf, 0, state["opens"] + ops.cast(opened, "int32"))
    return dict(state, stack=stack, last=last, opens=opens,
                depth=depth + ops.cast(opened, "int32") -
                ops.cast(closed, "int32"),
                placed=state["placed"] + ops.cast(leaf, "int32"))

  def min_limits(self, state):
    return state["leaves"] + 3

  def length_bound(self, inputs):
    return ops.shape(inputs)[1] + 3   # leaves are among the input tokens
