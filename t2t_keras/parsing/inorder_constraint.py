"""Parsing's decoding constraint for trees linearized in order
(``trees.linearize(..., order="in-order")``: a constituent's first child,
then its opening bracket, then its other children, then its closing
bracket): every output is a well-formed tree over exactly the input words,
in order, the words copied piece by piece from the source.

At each step a hypothesis may emit

* the next leaf piece: as the first token, inside a word (then the only
  choice), or inside an open constituent while words are left;
* an opening bracket: right after a word or a closing bracket (what it
  just completed becomes the new constituent's first child, so no
  constituent is empty), at a word boundary, below ``max_depth``, at most
  ``max_opens`` since the last leaf (in order, no tree of the WSJ sample
  opens more than 6 between two words, none of CRAFT more than 5; the
  bound stops unary chains ``(NP )NP (NP )NP ...``), and only if the
  length budget still leaves room to finish after it;
* the closing bracket of the innermost open constituent: at a word
  boundary; the outermost while words are left (``John (NP )NP``, then
  an opening bracket must take it in) only if that bracket may follow;
* EOS: once every word is placed, every bracket closed and the last token
  a closing bracket (a tree, not a bare word).

The length budget: with ``left`` leaf pieces to place and ``depth``
brackets open, finishing takes ``left + depth + 1`` tokens (EOS included),
and 2 more at depth 0 while words are left (a bracket to open and close);
so an opening bracket is allowed only where ``left + depth + 3`` tokens
remain, as in ``tree_constraint``, and closing the outermost constituent
while words are left only where ``left + 4`` do. Every limit is at least
``leaves + 3`` (the first word, its constituent opened and closed, EOS).
"""

from keras import ops

from t2t_keras.parsing.tree_constraint import (CLOSE, LEAF, MAX_DEPTH,
                                                MAX_OPENS, TreeConstraint)


class InOrderTreeConstraint(TreeConstraint):
  """Well-formed in-order trees over the input words (module docstring).

  The state is ``TreeConstraint``'s; its ``last`` (the kind of each
  hypothesis's last token) says whether a bracket may open.

  Args:
    pieces: the shared vocabulary's pieces (``SubwordVocab.all_pieces``).
    max_depth: the deepest nesting allowed.
    max_opens: the most brackets opened since the last leaf.
    renormalize: as ``TreeConstraint``'s.
  """

  # The softmax over the allowed tokens (``training.objective``) reads the
  # top-down rules at every position at once; it has no in-order form.
  along = None

  def __init__(self, pieces, max_depth=MAX_DEPTH, max_opens=MAX_OPENS,
               renormalize=True):
    super().__init__(pieces, None, max_depth, max_opens, renormalize)

  def _step_rules(self, state, starts_word, step, limits):
    left, depth = state["leaves"] - state["placed"], state["depth"]
    last = state["last"]
    boundary = ops.equal(left, 0) | starts_word
    completed = ops.equal(last, LEAF) | ops.equal(last, CLOSE)
    may_open = (boundary & completed & (depth < self.max_depth) &
                (state["opens"] < self.max_opens) &
                (left + depth + 3 <= limits - step))
    # Closing the outermost open constituent while words are left: an
    # opening bracket must follow, to take it as a first child.
    may_close = boundary & (depth > 0) & (
        (depth > 1) | ops.equal(left, 0) |
        ((left + 4 <= limits - step) & (state["opens"] < self.max_opens)))
    may_leaf = (left > 0) & ((depth > 0) | ops.equal(step, 0) |
                             ops.logical_not(boundary))
    may_end = ((ops.equal(depth, 0) & ops.equal(left, 0) &
                ops.equal(last, CLOSE)) | ops.equal(state["leaves"], 0))
    return may_open, may_close, may_leaf, may_end
