"""Where a text problem's raw sentence pairs come from.

- ``LocalFiles``: line-aligned files ``<raw_dir>/<prefix>.<lang>``, by default
  the prefix is the split name (``train.en``, ``train.de``, ``dev.en``...).
- ``TfdsSource``: a TensorFlow Datasets corpus (downloads on first use).

Both yield (source, target) str pairs per split and samples of each
language's training text for the vocabulary.
"""

import os

from t2t_keras.data.corpus import (CorpusError, SkipCounter, count_lines,
                                   read_parallel, sample_lines)

REQUIRED_SPLITS = ("train", "dev")


def parse_prefixes(text):
  """"train=multi30k/train,dev=wmt14/newstest2013" -> dict."""
  prefixes = {}
  for part in filter(None, (p.strip() for p in (text or "").split(","))):
    split, sep, prefix = part.partition("=")
    if not sep or split not in ("train", "dev", "test") or not prefix:
      raise CorpusError(f"malformed raw prefix {part!r}: expected "
                        "'train=PATH,dev=PATH,test=PATH' (paths relative to "
                        "--raw_data_dir, without the .<lang> suffix)")
    prefixes[split] = prefix
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

  def path(self, split, lang):
    prefix = self.prefixes.get(split, split)
    return os.path.join(self.raw_dir, f"{prefix}.{lang}")

  def has_split(self, split):
    return all(os.path.isfile(self.path(split, lang)) for lang in self.langs)

  def check(self, splits):
    """Fails early (before any work) on missing or misaligned files."""
    for split in splits:
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

  def pairs(self, split, skipped=None):
    if not self.has_split(split):
      missing = [self.path(split, l) for l in self.langs
                 if not os.path.isfile(self.path(split, l))]
      raise CorpusError(f"missing {split} file(s): {', '.join(missing)}")
    return read_parallel(*(self.path(split, l) for l in self.langs),
                         skipped=skipped)

  def sample(self, lang, byte_budget):
    return sample_lines(self.path("train", lang), byte_budget)

  def describe(self):
    return f"local files in {self.raw_dir}"


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
    import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
    try:
      return tfds.load(self.name, split=self.SPLITS[split],
                       data_dir=self.tmp_dir, download=True)
    except Exception as e:  # pylint: disable=broad-except
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
