"""Penn Treebank trees: reading, normalizing, and the linearization of
Vinyals & Kaiser et al. 2014, "Grammar as a Foreign Language" (the paper's
[37]), with the way back.

A tree is ``(label, children)`` where each child is a tree or, under a
part-of-speech tag, the word (a str): ``("NP", [("DT", "the"),
("NN", "dog")])``.

Linearized, the output is the bracketing with closing brackets labelled
and one leaf token per word, by ``leaves``:

    input:           John has a dog .
    leaves="words":  (S (NP John )NP (VP has (NP a dog )NP )VP . )S
    leaves="xx":     (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S
    leaves="tags":   (S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S

"words" copies the input (the decoder then reads which word it has reached);
"first" is "words" here, and keeps only each word's first subword piece once
encoded (``parsing.tree_constraint.first_pieces``; the output then shows a
prefix of each word, such as "Con" for "Consolidated");
"xx" is Vinyals et al.'s placeholder; "tags" predicts part-of-speech tags,
which EVALB does not score. With ``close_labels=False`` every closing
bracket is the bare ``)`` (``(S (NP John ) (VP has (NP a dog ) ) . )``): the
label is the one it closes, which ``delinearize`` and the decoding
constraint read from the open brackets, so the model does not learn it.
With ``order="in-order"`` (Liu & Zhang 2017's in-order transition system,
linearized for sequence-to-sequence parsing by Fernandez-Gonzalez &
Gomez-Rodriguez 2020) a constituent's first child comes before its opening
bracket, so the label is chosen after its first word or phrase is read:
``John (NP )NP (S has (VP a (NP dog )NP )VP . )S``.

Normalization (what a round trip gives back): the outer unlabelled
``( ... )`` wrapper is removed; empty elements (-NONE-) and the constituents
left empty by their removal are removed; function tags and indices are
stripped from labels (NP-SBJ-1 -> NP, PP=2 -> PP, ADVP|PRT -> ADVP), except for
tags that start with "-" such as -LRB-. EVALB deletes or ignores all of these
as well. Labels that WSJ never uses (the CRAFT treebank's) are spliced into
their parents, their children taking their place: NML (nominal modifiers,
flat in WSJ's NPs), CIT (citations), and CAPTION, HEADING and TITLE (wrappers
of a whole sentence; a wrapper at the root with several children, or with a
single word, becomes FRAG, WSJ's label for a fragment). A
leaf of several space-separated tokens (4 trees of CRAFT, none of the Penn
sample) becomes one word joined by "_", since words are space-separated.
"""

import re

from t2t_keras.errors import UserError

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


class TreeError(UserError):
  """A bracketed string that is not a tree."""


def parse(text):
  """One bracketed tree -> (label, children). Accepts the PTB's outer
  unlabelled wrapper, which is kept as label ""."""
  tokens = _TOKEN.findall(text)
  if not tokens:
    raise TreeError("empty tree")
  position = 0

  def node():
    nonlocal position
    if tokens[position] != "(":
      raise TreeError(f"expected '(' at token {position} of {text[:80]!r}")
    position += 1
    label = ""
    if position < len(tokens) and tokens[position] not in "()":
      label = tokens[position]
      position += 1
    children = []
    while position < len(tokens) and tokens[position] != ")":
      if tokens[position] == "(":
        children.append(node())
      else:
        children.append(tokens[position])
        position += 1
    if position >= len(tokens):
      raise TreeError(f"unbalanced brackets in {text[:80]!r}")
    position += 1
    leaves = [c for c in children if isinstance(c, str)]
    if leaves and len(leaves) == len(children):
      return (label, "_".join(leaves))       # "(NN Xpd TTD)" -> "Xpd_TTD"
    if leaves:
      raise TreeError(f"words {leaves} beside constituents in {text[:80]!r}")
    return (label, children)

  tree = node()
  if position != len(tokens):
    raise TreeError(f"text after the tree in {text[:80]!r}")
  return tree


def to_string(tree):
  label, children = tree
  if isinstance(children, str):
    return f"({label} {children})"
  return f"({label} {' '.join(to_string(c) for c in children)})"


def is_preterminal(tree):
  return isinstance(tree[1], str)


# Labels spliced into their parents (CRAFT's; see the module docstring).
SPLICED = frozenset({"NML", "CIT", "CAPTION", "HEADING", "TITLE"})
PAD_TAG = "XX"


def strip_label(label):
  """NP-SBJ-1 -> NP, PP=2 -> PP; -NONE-, -LRB- stay."""
  if label.startswith("-"):
    return label
  return re.split(r"[-=]", label, maxsplit=1)[0] or label


def normalize(tree):
  """The normalized tree (see the module docstring), or None if nothing is
  left (a tree of empty elements only)."""
  label, children = tree
  if label == "" and not isinstance(children, str) and len(children) == 1:
    return normalize(children[0])
  if isinstance(children, str):
    return None if label == "-NONE-" else (label, children)
  kept = _normalized_children(children)
  if not kept:
    return None
  label = strip_label(label).split("|")[0] or label
  if label in SPLICED:
    if len(kept) == 1 and not is_preterminal(kept[0]):
      return kept[0]
    return ("FRAG", kept)
  return (label, kept)


def _normalized_children(children):
  """Normalized children, those of spliced labels in their place."""
  kept = []
  for child in children:
    label, grandchildren = child
    if (not isinstance(grandchildren, str) and
        strip_label(label).split("|")[0] in SPLICED):
      kept.extend(_normalized_children(grandchildren))
    else:
      node = normalize(child)
      if node is not None:
        kept.append(node)
  return kept


def words(tree):
  if is_preterminal(tree):
    return [tree[1]]
  return [w for child in tree[1] for w in words(child)]


LEAVES = ("words", "first", "xx", "tags")


CLOSE = ")"      # the closing bracket without a label


def is_bracket(token):
  """Whether an output token opens or closes a constituent: "(NP", ")NP",
  ")" (no word is "(" or ")": ``parse`` reads them as brackets)."""
  return is_close(token) or (len(token) > 1 and token[0] == "(")


def is_close(token):
  """Whether an output token closes a constituent: ")NP" or ")"."""
  return token[:1] == CLOSE


ORDERS = ("top-down", "in-order")


def linearize(tree, leaves="tags", close_labels=True, order="top-down"):
  """A normalized tree -> (words, output tokens), leaves as ``leaves``
  (one of ``LEAVES``), closing brackets labelled or bare ``)``, brackets
  in ``order`` (one of ``ORDERS``; see the module docstring)."""
  if leaves not in LEAVES:
    raise TreeError(f"leaves must be one of {', '.join(LEAVES)}, got "
                    f"{leaves!r}")
  if order not in ORDERS:
    raise TreeError(f"order must be one of {', '.join(ORDERS)}, got "
                    f"{order!r}")
  tokens = []

  def walk(node):
    label, children = node
    if isinstance(children, str):
      tokens.append({"words": children, "first": children, "xx": PAD_TAG,
                     "tags": label}[leaves])
      return
    before = 0 if order == "top-down" else 1     # children before "(X"
    for child in children[:before]:
      walk(child)
    tokens.append("(" + label)
    for child in children[before:]:
      walk(child)
    tokens.append(CLOSE + (label if close_labels else ""))

  walk(tree)
  return words(tree), tokens


def _leaf_fits(token, sentence_words, placed, leaves):
  """Whether leaf ``token`` may stand for word ``placed`` (the word itself
  under "words" leaves, a prefix of it under "first", anything else)."""
  if placed >= len(sentence_words):
    return False
  word = sentence_words[placed]
  return {"words": token == word,
          "first": word.startswith(token)}.get(leaves, True)


def well_formed(tokens, sentence_words, leaves="tags", order="top-down"):
  """Whether output ``tokens`` are one tree over exactly
  ``sentence_words``: a single root, brackets balanced, each closing label
  the one it closes (or none), no empty constituent, one leaf per word (the
  word itself when ``leaves`` is "words", a prefix of it when "first"),
  brackets in ``order``. What ``delinearize`` returns unrepaired."""
  if order == "in-order":
    return _well_formed_in_order(tokens, sentence_words, leaves)
  stack, placed = [], 0
  for position, token in enumerate(tokens):
    if is_close(token):
      if not stack or token[1:] not in ("", stack[-1][0]) or (
          not stack[-1][1]):
        return False
      stack.pop()
      if stack:
        stack[-1][1] += 1
    elif is_bracket(token):
      if not stack and position:
        return False                         # a second root
      stack.append([token[1:], 0])
    else:
      if not stack or not _leaf_fits(token, sentence_words, placed, leaves):
        return False
      placed += 1
      stack[-1][1] += 1
  return not stack and bool(tokens) and placed == len(sentence_words)


def _well_formed_in_order(tokens, sentence_words, leaves):
  """``well_formed`` for brackets in order: an opening bracket follows a
  leaf or a closing bracket (its constituent's first child, so none is
  empty), and a leaf stands inside an open constituent, except the first
  token; the last token closes the root."""
  stack, placed, previous = [], 0, None
  for token in tokens:
    if is_close(token):
      if not stack or token[1:] not in ("", stack[-1]):
        return False
      stack.pop()
    elif is_bracket(token):
      if previous is None or not (is_close(previous) or
                                  not is_bracket(previous)):
        return False                         # nothing to take as first child
      stack.append(token[1:])
    else:
      if (not stack and previous is not None) or not _leaf_fits(
          token, sentence_words, placed, leaves):
        return False
      placed += 1
    previous = token
  return (not stack and previous is not None and is_close(previous) and
          placed == len(sentence_words))


def delinearize(tokens, sentence_words, pad_tag=PAD_TAG, tags=True,
                order="top-down"):
  """Output tokens and the input words -> a tree, repairing what a model may
  get wrong. Each leaf token takes the next input word; its tag is the
  token itself with ``tags``, else ``pad_tag``. Brackets are in ``order``:
  in order, an opening bracket takes the leaf or constituent just
  completed as its first child. Repairs:

  - a closing bracket with nothing open is dropped; its label is ignored
    (the innermost open constituent is closed);
  - constituents left open at the end are closed;
  - leaf tokens beyond the number of words are dropped; words
    without one get ``pad_tag`` in a flat constituent under the root;
  - in order, an opening bracket with nothing just completed starts empty;
  - an empty output gives (X (pad_tag w1) (pad_tag w2) ...).
  """
  word_iter = iter(sentence_words)
  stack = [("", [])]                         # a virtual root
  completed = False        # the last token completed a leaf or constituent
  for token in tokens:
    if is_close(token):
      if len(stack) > 1:
        node = stack.pop()
        if node[1]:
          stack[-1][1].append(node)
      completed = True
    elif is_bracket(token):
      siblings = stack[-1][1]
      first = ([siblings.pop()] if order == "in-order" and completed and
               siblings else [])
      stack.append((token[1:], first))
      completed = False
    else:
      word = next(word_iter, None)
      if word is not None:
        stack[-1][1].append((token if tags else pad_tag, word))
      completed = word is not None
  while len(stack) > 1:
    node = stack.pop()
    if node[1]:
      stack[-1][1].append(node)
  leftover = [(pad_tag, w) for w in word_iter]
  top = stack[0][1]
  if len(top) == 1 and not leftover:
    return top[0]
  if len(top) == 1 and not is_preterminal(top[0]):
    label, children = top[0]
    return (label, children + leftover)
  return ("X", top + leftover)


def read_trees(path):
  """Trees from a file: one per line, or .mrg style (a tree over several
  lines, its continuation lines indented). Yields (line number where the
  tree starts, its text on one line, or None for one that is not a tree).

  A line that begins with "(" at its first column starts a tree, so a tree
  short of a closing bracket ends there instead of swallowing the trees
  after it; a ")" with no tree open, text or a second tree after a tree on
  its closing line, or a line that is not UTF-8, spoils the tree it is in
  (yielded as one None for the caller to count).
  """
  depth, start, chars, bad = 0, None, [], False
  with open(path, "rb") as f:
    for number, raw in enumerate(f, 1):
      try:
        line = raw.decode("utf-8").lstrip("\ufeff")
      except UnicodeDecodeError:
        if depth > 0:
          bad = True
        else:
          yield number, None
        continue
      if line.startswith("(") and depth > 0:
        yield start, None                       # a tree short of a ")"
        depth, chars, bad = 0, [], False
      # Trees that close on this line wait for its end: anything but
      # spaces after one (a ")" too many, a second tree) spoils the line's
      # trees, yielded as one None, never as a tree carried into a pair.
      closed, spoiled = [], False
      for char in line:
        if depth == 0 and char == ")":
          spoiled = True                        # a ")" too many
          continue
        if depth == 0 and char != "(":
          spoiled = spoiled or (bool(closed) and not char.isspace())
          continue                              # between trees
        if depth == 0:
          spoiled = spoiled or bool(closed)     # a second tree on the line
          start, chars = number, []
        chars.append(char)
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
          closed.append((start, None if bad else
                         " ".join("".join(chars).split())))
          bad = False
      if spoiled:
        yield (closed[0][0] if closed else number), None
        if depth > 0:   # a tree opened after the fault goes with it
          depth, chars, bad = 0, [], False
      else:
        yield from closed
  if depth > 0:
    yield start, None                           # unclosed at the end
