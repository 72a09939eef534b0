"""Carrying a trained model's rows over to another vocabulary
(``t2t-trainer --warm_start_vocab=map``): fine-tuning on a domain whose
vocabulary holds pieces the first one never had.

A piece both vocabularies hold (the same string: byte pieces and the
special ids included) keeps its trained row. A piece only the new
vocabulary holds starts from the mean of the rows of the pieces the old
vocabulary splits its text into: "\u2581Brexit" from those of "\u2581Bre",
"x", "it"; a piece inside a word ("ing") spelled as it is inside one.
OpenNMT-tf's ``update_vocab`` starts new rows at random; the mean starts a
new piece where the model's knowledge of its letters is.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class PieceMap:
  """Per id of the new vocabulary, the ids of the old one its row is the
  mean of (one id for a kept piece).

  Attributes:
    rows: tuple of ``new_size`` tuples of old ids.
    kept: how many new pieces the old vocabulary holds as they are.
  """
  rows: tuple
  kept: int

  @property
  def size(self):
    return len(self.rows)

  @property
  def new(self):
    return self.size - self.kept

  @property
  def shared_fraction(self):
    return self.kept / max(1, self.size)

  def apply(self, matrix):
    """float [old_size, d] -> float [new_size, d]: the kept rows copied,
    each new row the mean of its old pieces' rows."""
    matrix = np.asarray(matrix)
    return np.stack([matrix[list(ids)].mean(axis=0) for ids in self.rows])


def piece_map(old, new):
  """The ``PieceMap`` from vocabulary ``old`` to ``new`` (``SubwordVocab``s).

  A new piece whose text the old vocabulary gives no piece for (none that
  SentencePiece can encode: an empty string) takes the mean of every old
  row."""
  index = {piece: i for i, piece in enumerate(old.all_pieces())}
  everything = tuple(range(old.size))
  rows, kept = [], 0
  for piece in new.all_pieces():
    if piece in index:
      rows.append((index[piece],))
      kept += 1
    else:
      rows.append(tuple(old.encode_inside(piece)) or everything)
  return PieceMap(tuple(rows), kept)
