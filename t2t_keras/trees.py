"""Penn Treebank trees: reading, normalizing, and the linearization of
Vinyals & Kaiser et al. 2014, "Grammar as a Foreign Language" (the paper's
[37]), with the way back.

A tree is ``(label, children)`` where each child is a tree or, under a
part-of-speech tag, the word (a str): ``("NP", [("DT", "the"),
("NN", "dog")])``.

Linearized, the words stay in the input and the output is the bracketing
with part-of-speech tags in the words' places, closing brackets labelled:

    input:  John has a dog .
    output: (S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S

Normalization (what a round trip gives back): the outer unlabelled
``( ... )`` wrapper is removed; empty elements (-NONE-) and the constituents
left empty by their removal are removed; function tags and indices are
stripped from labels (NP-SBJ-1 -> NP, PP=2 -> PP), except for tags that start
with "-" such as -LRB-. EVALB deletes or ignores all of these as well. A
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
  kept = [c for c in (normalize(c) for c in children) if c is not None]
  if not kept:
    return None
  return (strip_label(label), kept)


def words(tree):
  if is_preterminal(tree):
    return [tree[1]]
  return [w for child in tree[1] for w in words(child)]


def linearize(tree):
  """A normalized tree -> (words, output tokens)."""
  tokens = []

  def walk(node):
    label, children = node
    if isinstance(children, str):
      tokens.append(label)
      return
    tokens.append("(" + label)
    for child in children:
      walk(child)
    tokens.append(")" + label)

  walk(tree)
  return words(tree), tokens


def delinearize(tokens, sentence_words, pad_tag="XX"):
  """Output tokens and the input words -> a tree, repairing what a model may
  get wrong:

  - a closing bracket with nothing open is dropped; its label is ignored
    (the innermost open constituent is closed);
  - constituents left open at the end are closed;
  - part-of-speech tokens beyond the number of words are dropped; words
    without one get ``pad_tag`` in a flat constituent under the root;
  - an empty output gives (X (pad_tag w1) (pad_tag w2) ...).
  """
  word_iter = iter(sentence_words)
  stack = [("", [])]                         # a virtual root
  for token in tokens:
    if token.startswith("(") and len(token) > 1:
      stack.append((token[1:], []))
    elif token.startswith(")"):
      if len(stack) > 1:
        node = stack.pop()
        if node[1]:
          stack[-1][1].append(node)
    else:
      word = next(word_iter, None)
      if word is not None:
        stack[-1][1].append((token, word))
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
  lines, trees separated by their balanced brackets). Yields str."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  depth, start = 0, None
  for i, char in enumerate(text):
    if char == "(":
      if depth == 0:
        start = i
      depth += 1
    elif char == ")":
      depth -= 1
      if depth == 0:
        yield " ".join(text[start:i + 1].split())
      elif depth < 0:
        raise TreeError(f"unbalanced ')' in {path} at character {i}")
  if depth:
    raise TreeError(f"unbalanced '(' at the end of {path}")
