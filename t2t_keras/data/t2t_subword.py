"""tensor2tensor's SubwordTextEncoder, read from its vocabulary file, so that
runs made by tensor2tensor encode and decode text as they did.

Its rules, in the order they apply to a line:
1. Tokens: runs of alphanumeric characters (Unicode categories L* and N*)
   and runs of the others; a token that is one space between two others is
   dropped (one at the line's start or end is kept).
2. Escaping: "\\" -> "\\\\", "_" -> "\\u", and a character that no subtoken
   holds (or a newline) -> "\\<decimal code point>;"; then "_" ends the token.
3. Subtokens: from the token's start, the longest subtoken in the vocabulary,
   again and again (greedy longest match).
Decoding joins the subtokens, cuts the text at each "_", unescapes each
token and puts a space between two tokens that both begin alphanumeric.

The vocabulary file holds one subtoken a line, quoted (``'Ein_'``); the id
is the line's number: 0 ``<pad>_``, 1 ``<EOS>_``. ``T2TSubwordVocab`` has
the interface of ``data.vocab.SubwordVocab`` (``encode``, ``decode``,
``size``, pieces; the graph ops in ``data.t2t_subword_graph``).
"""

import functools
import os
import re
import sys
import unicodedata

from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.io.outputs import output_file

# Characters every vocabulary can spell, whatever its subtokens hold.
ESCAPE_CHARS = frozenset("\\_u;0123456789")
_UNESCAPE = re.compile(r"\\u|\\\\|\\([0-9]+);")
# What tensor2tensor writes for an escaped code point that is no character.
UNDEFINED = "\u3013"
RESERVED = ("<pad>_", "<EOS>_")


@functools.lru_cache(maxsize=None)
def alphanumeric_ranges():
  """The code points tensor2tensor calls alphanumeric (categories L*, N*)
  as sorted, disjoint [start, end) pairs."""
  ranges, start = [], None
  for code in range(sys.maxunicode + 1):
    inside = unicodedata.category(chr(code))[0] in "LN"
    if inside and start is None:
      start = code
    elif not inside and start is not None:
      ranges.append((start, code))
      start = None
  if start is not None:
    ranges.append((start, sys.maxunicode + 1))
  return tuple(ranges)


@functools.lru_cache(maxsize=None)
def _alphanumeric_set():
  return frozenset(chr(c) for start, end in alphanumeric_ranges()
                   for c in range(start, end))


def is_alphanumeric(char):
  return char in _alphanumeric_set()


def tokenize(text):
  """str -> tokens (rule 1)."""
  if not text:
    return []
  alnum = [is_alphanumeric(c) for c in text]
  tokens, start = [], 0
  for pos in range(1, len(text)):
    if alnum[pos] != alnum[pos - 1]:
      token = text[start:pos]
      if token != " " or start == 0:
        tokens.append(token)
      start = pos
  tokens.append(text[start:])
  return tokens


def detokenize(tokens):
  """Tokens -> str: a space between two tokens that begin alphanumeric."""
  out = []
  for i, token in enumerate(tokens):
    if i and is_alphanumeric(tokens[i - 1][0]) and is_alphanumeric(token[0]):
      out.append(" ")
    out.append(token)
  return "".join(out)


def escape(token, alphabet):
  """A token -> its escaped form ending in "_" (rule 2)."""
  token = token.replace("\\", "\\\\").replace("_", "\\u")
  return "".join(c if c in alphabet and c != "\n" else f"\\{ord(c)};"
                 for c in token) + "_"


def _unescaped(match):
  if match.group(1) is None:
    return "_" if match.group(0) == "\\u" else "\\"
  code = int(match.group(1))
  return chr(code) if code <= sys.maxunicode else UNDEFINED


def unescape(escaped):
  """An escaped token (its final "_" optional) -> the token."""
  trimmed = escaped[:-1] if escaped.endswith("_") else escaped
  return _UNESCAPE.sub(_unescaped, trimmed)


def read_subtokens(path):
  """The subtokens of a vocabulary file, in id order."""
  if not os.path.isfile(path):
    raise MissingFileError(f"vocabulary file {path} does not exist")
  try:
    with open(path, encoding="utf-8", newline="") as f:
      lines = f.read().split("\n")
  except UnicodeDecodeError as e:
    raise UserError(f"{path} is not a tensor2tensor subword vocabulary: "
                    f"byte {e.start} is not UTF-8") from None
  if lines and lines[-1] == "":
    lines.pop()
  subtokens = []
  for line in lines:
    s = line.rstrip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
      s = s[1:-1]
    subtokens.append(s)
  seen = {}
  for number, subtoken in enumerate(subtokens, 1):
    if subtoken in seen:
      raise UserError(f"{path} is damaged: line {number} repeats the "
                      f"subtoken {subtoken!r} of line {seen[subtoken]} (a "
                      "vocabulary holds each subtoken once; ids after it "
                      "would shift)")
    seen[subtoken] = number
  if tuple(subtokens[:2]) != RESERVED:
    raise UserError(f"{path} is not a tensor2tensor subword vocabulary: its "
                    f"first lines are {subtokens[:2]!r}, expected "
                    f"{list(RESERVED)!r} (ids {PAD_ID} and {EOS_ID})")
  return subtokens


class T2TSubwordVocab:
  """A SubwordTextEncoder vocabulary.

  Args:
    subtokens: the subtoken strings in id order (``read_subtokens``).
    file_bytes: the file they were read from, as bytes (what
      ``model_proto`` returns: the run's vocabulary check hashes it).
  """

  kind = "t2t_subword"

  def __init__(self, subtokens, file_bytes):
    self.subtokens = list(subtokens)
    self.model_proto = bytes(file_bytes)
    self._ids = {s: i for i, s in enumerate(self.subtokens) if s}
    self.max_subtoken_length = max((len(s) for s in self.subtokens),
                                   default=0)
    self.alphabet = frozenset(c for s in self.subtokens for c in s) | \
        ESCAPE_CHARS
    self._token_ids = functools.lru_cache(maxsize=1 << 16)(self._spell)
    self._tf_tokenizer = None

  @classmethod
  def load(cls, path):
    subtokens = read_subtokens(path)
    with open(path, "rb") as f:
      return cls(subtokens, f.read())

  def save(self, path):
    """Writes the vocabulary file as it was read (atomically)."""
    with output_file(path) as f:
      f.write(self.model_proto)

  # -- Python ---------------------------------------------------------------
  @property
  def size(self):
    return len(self.subtokens)

  lowercases = False

  def _spell(self, token):
    """A token -> its subtoken ids (rules 2 and 3)."""
    escaped = escape(token, self.alphabet)
    ids, start = [], 0
    while start < len(escaped):
      for end in range(min(len(escaped), start + self.max_subtoken_length),
                       start, -1):
        found = self._ids.get(escaped[start:end])
        if found is not None:
          ids.append(found)
          start = end
          break
      else:
        raise UserError(f"the subword vocabulary cannot spell "
                        f"{escaped[start]!r} (a vocabulary lacking one of "
                        f"its own characters as a subtoken is damaged)")
    return tuple(ids)

  def encode(self, text):
    """str -> list of ids, without EOS."""
    return [i for token in tokenize(text) for i in self._token_ids(token)]

  def decode(self, ids):
    """Ids -> str; stops at the first EOS and ignores padding."""
    ids = [int(i) for i in ids]
    if EOS_ID in ids:
      ids = ids[:ids.index(EOS_ID)]
    joined = "".join(self.subtokens[i] for i in ids
                     if i != PAD_ID and 0 <= i < self.size)
    tokens = [unescape(t + "_") for t in joined.split("_") if t]
    return detokenize([t for t in tokens if t])

  def all_pieces(self):
    """Every id's subtoken, in id order (a word's last ends in "_")."""
    return list(self.subtokens)

  def word_starts(self):
    """Per id, whether its subtoken may begin a token: after a whole-word
    prefix comes a subtoken that starts a new one. Any subtoken may (there
    is no mark of a token's start), so every id is allowed."""
    return [True] * self.size

  def pieces(self, ids):
    """Ids -> their subtokens, for display."""
    return [self.subtokens[int(i)] if 0 <= int(i) < self.size else "<?>"
            for i in ids]

  # -- TensorFlow graph -----------------------------------------------------
  @property
  def tf_tokenizer(self):
    """A tf.Module with ``tokenize`` and ``detokenize`` in stock ops
    (``data.t2t_subword_graph``)."""
    if self._tf_tokenizer is None:
      from t2t_keras.data.t2t_subword_graph import SubwordGraph
      self._tf_tokenizer = SubwordGraph(self)
    return self._tf_tokenizer

  def tf_encode(self, strings):
    return self.tf_tokenizer.tokenize(strings)

  def tf_decode(self, ids):
    return self.tf_tokenizer.detokenize(ids)
