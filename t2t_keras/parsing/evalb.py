"""Labelled-bracket parsing scores with EVALB's standard parameters
(COLLINS.prm), as the paper's Table 4 and ../shared/data/README.md state:

- the TOP bracket, -NONE- elements and the punctuation tags , : `` '' . are
  deleted (their words do not count in spans), and so are constituents
  left empty; which words are punctuation is decided by the gold tree's
  tags, in the predicted tree too, as EVALB does since its 2006 update, so
  a mistagged punctuation word does not drop the sentence;
- ADVP and PRT are the same label; function tags after - or = are stripped;
- part-of-speech brackets are not scored;
- the "<= 40 words" figures count sentences of at most 40 words, -NONE-
  not counted;
- a sentence whose predicted words differ from the gold words is reported
  and left out of the scores (EVALB does the same), never silently scored.
"""

import collections
import dataclasses

from t2t_keras.parsing import trees
from t2t_keras.errors import UserError

DELETED = {"TOP", "-NONE-", ",", ":", "``", "''", "."}
EQUIVALENT = {"PRT": "ADVP"}


def _label(label):
  label = trees.strip_label(label)
  return EQUIVALENT.get(label, label)


def punctuation(tree):
  """Positions (among the words, -NONE- left out) whose tag is deleted."""
  return {i for i, (label, _) in enumerate(words_of(tree))
          if trees.strip_label(label) in DELETED}


def words_of(tree):
  """(tag, word) of every leaf but -NONE- elements."""
  return [(label, word) for label, word in _leaves(tree)
          if trees.strip_label(label) != "-NONE-"]


def brackets(tree, deleted=None):
  """(words, Counter of (label, start, end)) of a parsed tree, after the
  deletions above; ``deleted``: the word positions to delete (default: the
  tree's own punctuation, see ``punctuation``)."""
  deleted = punctuation(tree) if deleted is None else deleted
  words, spans = [], collections.Counter()
  position = iter(range(1 << 30))

  def walk(node):
    label, children = node
    if isinstance(children, str):
      if (trees.strip_label(label) != "-NONE-" and
          next(position) not in deleted):
        words.append(children)
      return
    start = len(words)
    for child in children:
      walk(child)
    if len(words) > start and label and _label(label) not in DELETED:
      spans[(_label(label), start, len(words))] += 1

  walk(tree)
  return words, spans


def length_for_cutoff(tree):
  """Words that count for the <= 40 cutoff: all but -NONE-."""
  return sum(1 for label, _ in _leaves(tree) if label != "-NONE-")


def _leaves(tree):
  label, children = tree
  if isinstance(children, str):
    return [(label, children)]
  return [leaf for child in children for leaf in _leaves(child)]


@dataclasses.dataclass
class Counts:
  matched: int = 0
  gold: int = 0
  test: int = 0
  sentences: int = 0

  def add(self, matched, gold, test):
    self.matched += matched
    self.gold += gold
    self.test += test
    self.sentences += 1

  def scores(self):
    """(precision, recall, F1) in percent."""
    precision = 100.0 * self.matched / self.test if self.test else 0.0
    recall = 100.0 * self.matched / self.gold if self.gold else 0.0
    f1 = (2 * precision * recall / (precision + recall)
          if precision + recall else 0.0)
    return precision, recall, f1


def evaluate(gold_lines, test_lines, cutoff=40):
  """Scores line-aligned bracketed trees.

  Returns {"all": Counts, "short": Counts (<= cutoff words), "errors":
  [(line number, reason)]}.
  """
  if len(gold_lines) != len(test_lines):
    raise UserError(f"{len(gold_lines)} gold trees but {len(test_lines)} "
                     "test trees")
  result = {"all": Counts(), "short": Counts(), "errors": []}
  for number, (gold_text, test_text) in enumerate(
      zip(gold_lines, test_lines), 1):
    try:
      gold_tree = trees.parse(gold_text)
      test_tree = trees.parse(test_text)
    except trees.TreeError as e:
      result["errors"].append((number, f"unreadable tree: {e}"))
      continue
    if ([w for _, w in words_of(gold_tree)] !=
        [w for _, w in words_of(test_tree)]):
      result["errors"].append((number, "words differ from the gold tree's"))
      continue
    deleted = punctuation(gold_tree)
    _, gold_spans = brackets(gold_tree, deleted)
    _, test_spans = brackets(test_tree, deleted)
    matched = sum((gold_spans & test_spans).values())
    counts = (matched, sum(gold_spans.values()), sum(test_spans.values()))
    result["all"].add(*counts)
    if length_for_cutoff(gold_tree) <= cutoff:
      result["short"].add(*counts)
  return result
