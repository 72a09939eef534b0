"""Where a text problem's raw sentence pairs come from.

- ``LocalFiles``: line-aligned files ``<raw_dir>/<prefix>.<lang>``, by default
  the prefix is the split name (``train.en``, ``train.de``, ``dev.en``...).
- ``TfdsSource``: a TensorFlow Datasets corpus (downloads on first use).

Both yield (source, target) str pairs per split and samples of each
language's training text for the vocabulary.
"""

import contextlib
import itertools
import logging
import os

from t2t_keras.data.corpus import (CorpusError, SkipCounter, count_lines,
                                   read_parallel, sample_lines)

REQUIRED_SPLITS = ("train", "dev")


class Mixture(tuple):
  """Several training corpora mixed by sampling: ((prefix, weight), ...),
  weights > 0 (normalized when training reads them)."""


def _weighted(part, entry):
  prefix, sep, weight = entry.rpartition(":")
  if not sep:
    return entry, None
  try:
    value = float(weight)
  except ValueError:
    value = -1.0
  if not prefix or not value > 0:
    raise CorpusError(f"malformed raw prefix {part!r}: a weight after ':' "
                      f"must be a number > 0, got {weight!r}")
  return prefix, value


def parse_prefixes(text):
  """"train=multi30k/train,dev=wmt14/newstest2013" -> {split: prefix}.

  The train split may list several corpora with sampling weights,
  "train=europarl:0.7,news:0.3,dev=newstest2013": its value is then a
  ``Mixture``."""
  entries, split = {}, None
  for part in filter(None, (p.strip() for p in (text or "").split(","))):
    name, sep, prefix = part.partition("=")
    if sep:
      split = name
      if split not in ("train", "dev", "test") or not prefix:
        split = None
    else:
      prefix = part
    if split is None or not prefix:
      raise CorpusError(f"malformed raw prefix {part!r}: expected "
                        "'train=PATH,dev=PATH,test=PATH' (paths relative to "
                        "--raw_data_dir, without the .<lang> suffix), or "
                        "weighted training corpora 'train=PATH:0.7,PATH:0.3'")
    entries.setdefault(split, []).append(_weighted(part, prefix))
  prefixes = {}
  for split, parts in entries.items():
    if len(parts) == 1:
      prefixes[split] = parts[0][0]
    elif split != "train":
      raise CorpusError(f"--raw_prefixes lists {len(parts)} {split} "
                        "corpora; only train can mix several")
    elif any(w is None for _, w in parts):
      raise CorpusError("--raw_prefixes: several train corpora need a "
                        "weight each, e.g. 'train=a:0.7,b:0.3'")
    else:
      prefixes[split] = Mixture(parts)
  return prefixes


class PairSource:
  """Base of the sources: ``langs`` (source, target) and ``pairs``."""

  langs = ("src", "tgt")

  def has_split(self, split):
    del split
    return True

  def check(self, splits):
    """Fails early on unusable input; nothing to check by default."""
    del splits

  def pairs(self, split, skipped=None):
    raise NotImplementedError

  def sample(self, lang, byte_budget):
    """About ``byte_budget`` bytes of ``lang``'s training text (the first
    pairs; 0 or less: all of it)."""
    index, total = self.langs.index(lang), 0
    for pair in self.pairs("train"):
      yield pair[index]
      total += len(pair[index].encode("utf-8"))
      if 0 < byte_budget <= total:
        return


def _has_text(path):
  """Whether the file at ``path`` has a line that is not blank (read up to
  the first one)."""
  with open(path, "rb") as f:
    return any(line.strip() for line in f)


class LocalFiles(PairSource):
  """Parallel text files in ``raw_dir``.

  Args:
    raw_dir: the directory.
    source_lang, target_lang: file suffixes, e.g. "en" and "de".
    prefixes: optional {split: path prefix relative to raw_dir}.
  """

  def __init__(self, raw_dir, source_lang, target_lang, prefixes=None):
    if not os.path.isdir(raw_dir):
      raise CorpusError(f"--raw_data_dir {raw_dir} is not a directory")
    self.raw_dir = raw_dir
    self.langs = (source_lang, target_lang)
    self.prefixes = dict(prefixes or {})
    train = self.prefixes.get("train")
    # The training corpora of a weighted mixture, one source each.
    self.mixture = None
    if isinstance(train, Mixture):
      self.mixture = [
          (LocalFiles(raw_dir, source_lang, target_lang,
                      dict(self.prefixes, train=prefix)), prefix, weight)
          for prefix, weight in train]

  def path(self, split, lang):
    prefix = self.prefixes.get(split, split)
    return os.path.join(self.raw_dir, f"{prefix}.{lang}")

  def raw_files(self, splits=("train", "dev", "test")):
    """The paths of every raw file of ``splits`` (a mixture's corpora
    included), whether or not they exist."""
    paths = []
    for split in splits:
      if split == "train" and self.mixture:
        for part, _, _ in self.mixture:
          paths += part.raw_files([split])
      else:
        paths += [self.path(split, lang) for lang in self.langs]
    return paths

  def has_split(self, split):
    if split == "train" and self.mixture:
      return all(part.has_split(split) for part, _, _ in self.mixture)
    return all(os.path.isfile(self.path(split, lang)) for lang in self.langs)

  def check(self, splits):
    """Fails early (before any work) on missing or misaligned files."""
    for split in splits:
      if split == "train" and self.mixture:
        for part, _, _ in self.mixture:
          part.check([split])
        continue
      if split not in REQUIRED_SPLITS and not self.has_split(split):
        continue
      paths = [self.path(split, lang) for lang in self.langs]
      missing = [p for p in paths if not os.path.isfile(p)]
      if missing:
        raise CorpusError(f"missing {split} file(s): {', '.join(missing)}")
      counts = [count_lines(p) for p in paths]
      if counts[0] != counts[1]:
        raise CorpusError(
            f"parallel files differ in length: {paths[0]} has {counts[0]} "
            f"lines, {paths[1]} has {counts[1]}")
      empty = [p for p in paths if not _has_text(p)]
      if split == "train" and empty:
        raise CorpusError(
            f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} "
            "empty (no line with text): the vocabulary and the model learn "
            "from the train files; give them sentences, one a line")

  def pairs(self, split, skipped=None):
    if split == "train" and self.mixture:
      return itertools.chain.from_iterable(
          part.pairs(split, skipped) for part, _, _ in self.mixture)
    if not self.has_split(split):
      missing = [self.path(split, l) for l in self.langs
                 if not os.path.isfile(self.path(split, l))]
      raise CorpusError(f"missing {split} file(s): {', '.join(missing)}")
    return read_parallel(*(self.path(split, l) for l in self.langs),
                         skipped=skipped)

  def sample(self, lang, byte_budget):
    """Training text for the vocabulary; a mixture's corpora share the
    budget by weight."""
    if self.mixture:
      total = sum(w for _, _, w in self.mixture)
      return itertools.chain.from_iterable(
          part.sample(lang, int(byte_budget * w / total) if byte_budget > 0
                      else 0) for part, _, w in self.mixture)
    return sample_lines(self.path("train", lang), byte_budget)

  def describe(self):
    return f"local files in {self.raw_dir}"


@contextlib.contextmanager
def _quiet_downloads():
  """urllib3's and tfds's retry warnings held back while tfds downloads:
  a download that fails ends in one line (``TfdsSource._load``)."""
  names = ("urllib3", "absl", "tensorflow_datasets")
  loggers = [logging.getLogger(n) for n in names]
  levels = [l.level for l in loggers]
  for logger in loggers:
    logger.setLevel(logging.ERROR)
  try:
    yield
  finally:
    for logger, level in zip(loggers, levels):
      logger.setLevel(level)


class TfdsSource(PairSource):
  """A TensorFlow Datasets translation corpus, e.g. "wmt14_translate/de-en".

  Splits: train -> "train", dev -> "validation", test -> "test".
  """

  SPLITS = {"train": "train", "dev": "validation", "test": "test"}

  def __init__(self, name, tmp_dir, source_lang, target_lang):
    self.name = name
    self.tmp_dir = tmp_dir
    self.langs = (source_lang, target_lang)

  def _load(self, split):
    import tensorflow_datasets as tfds
    tfds.disable_progress_bar()   # the command's own lines say what it does
    try:
      with _quiet_downloads():
        return tfds.load(self.name, split=self.SPLITS[split],
                         data_dir=self.tmp_dir, download=True)
    except Exception as e:
      raise CorpusError(
          f"could not load TensorFlow Datasets '{self.name}' into "
          f"{self.tmp_dir} ({type(e).__name__}: {str(e)[:200]}); without a "
          "network, give local files with --raw_data_dir") from None

  def has_split(self, split):
    return split in self.SPLITS

  def pairs(self, split, skipped=None):
    skipped = skipped if skipped is not None else SkipCounter()
    source_lang, target_lang = self.langs
    for number, example in enumerate(self._load(split).as_numpy_iterator()):
      try:
        source = example[source_lang].decode("utf-8").strip()
        target = example[target_lang].decode("utf-8").strip()
      except UnicodeDecodeError:
        skipped.skip("invalid UTF-8", f"{self.name} {split} #{number}")
        continue
      if not source or not target:
        skipped.skip("empty line", f"{self.name} {split} #{number}")
        continue
      yield source, target

  def describe(self):
    return f"TensorFlow Datasets {self.name}"


class GeneratedSource(PairSource):
  """Pairs made by a function ``make(split) -> iterable of pairs``."""

  def __init__(self, make, description, source_lang, target_lang):
    self._make = make
    self._description = description
    self.langs = (source_lang, target_lang)

  def pairs(self, split, skipped=None):
    del skipped
    return iter(self._make(split))

  def describe(self):
    return self._description
