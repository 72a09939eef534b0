"""Text-to-text problems: raw sentence pairs -> a shared subword vocabulary
-> sharded TFRecords -> length-bucketed batches.

Data layout in ``data_dir`` (what t2t-datagen writes):
  vocab.<data_name>.<vocab_size>.model          the SentencePiece model
  <data_name>-<split>-<i>-of-<n>                 TFRecord shards of examples
  <data_name>.shards.json                        what datagen wrote (data.shards)
A split's shards appear only once the whole split is written
(``data.shards``), so a re-run skips the splits (and the vocabulary) that
are done.
"""

import collections
import glob
import itertools
import os

from t2t_keras.data import mixture, pipeline, raw_record, sampled, shards
from t2t_keras.data.corpus import CorpusError, SkipCounter
from t2t_keras.data.problem import Problem
from t2t_keras.data.sources import LocalFiles, Mixture, REQUIRED_SPLITS
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.ids import EOS_ID
from t2t_keras.io import staging
from t2t_keras.io.files import remove_tree
from t2t_keras.io.logs import log_line

DEFAULT_BYTE_BUDGET = 1_000_000
SHARDS = {"train": 10, "dev": 1, "test": 1}

# Training text read to say how well a kept vocabulary spells it.
SPELLING_SAMPLE_BYTES = 500_000


def spelling_report(vocab, lines, most=3):
  """How well ``vocab`` spells the words of ``lines``: the share of word
  occurrences it writes in at most ``most`` pieces (a vocabulary kept from
  another domain, e.g. a fine-tuning source's, should spell most of the
  new domain's words in few pieces)."""
  counts = collections.Counter(w for line in lines for w in line.split())
  total = sum(counts.values())
  short = sum(n for word, n in counts.items()
              if len(vocab.encode(word)) <= most)
  if not total:
    return "no training words to measure it on"
  return (f"it spells {100 * short / total:.1f}% of {total:,} training word "
          f"occurrences in at most {most} pieces")


class Text2TextProblem(Problem):
  """Base of translation-like problems with one shared vocabulary.

  Subclasses set ``source_lang``, ``target_lang``, ``vocab_size`` and may
  override ``default_source`` (where data comes from without local files).
  ``reverse = True`` swaps inputs and targets of the same data (``_rev``).
  """

  source_lang = "src"
  target_lang = "tgt"
  vocab_size = 8000
  vocab_model_type = "bpe"
  # False: pieces may join letters and punctuation (see SubwordVocab.build).
  vocab_split_by_script = True
  reverse = False
  validation_bleu = True
  # BPE-dropout copies of the training pairs (data.sampled); 0: none.
  bpe_dropout = 0.0
  bpe_dropout_copies = sampled.DEFAULT_COPIES
  # True: the vocabulary lowercases all text (SubwordVocab.build); None:
  # whatever data_dir's vocabulary does (a new one keeps the case).
  lowercase = None

  # What t2t-datagen's flags may set (e.g. a smaller vocabulary for tests).
  OPTIONS = ("source_lang", "target_lang", "vocab_size", "vocab_model_type",
             "bpe_dropout", "bpe_dropout_copies", "lowercase")

  @property
  def data_name(self):
    """Name of the data files; ``_rev`` problems share their base's."""
    name = self.name
    return name[:-len("_rev")] if self.reverse and name.endswith("_rev") \
        else name

  # -- where raw data comes from ----------------------------------------------
  def default_source(self, tmp_dir):
    """Raw pairs when no local files are given; None if there is none."""
    del tmp_dir
    return None

  def source(self, tmp_dir=None, raw_dir=None, raw_prefixes=None):
    if raw_dir:
      return LocalFiles(raw_dir, self.source_lang, self.target_lang,
                        raw_prefixes)
    source = self.default_source(tmp_dir)
    if source is None:
      raise CorpusError(
          f"problem {self.name} has no data to download; give local files "
          f"with --raw_data_dir (holding train.{self.source_lang}, "
          f"train.{self.target_lang}, dev.*, test.*)")
    return source

  # -- files in data_dir --------------------------------------------------------
  def vocab_path(self, data_dir):
    """Where datagen writes the vocabulary of ``vocab_size`` pieces."""
    return os.path.join(data_dir,
                        f"vocab.{self.data_name}.{self.vocab_size}.model")

  def vocab(self, data_dir):
    """The vocabulary datagen wrote in ``data_dir`` (whatever its size)."""
    if not data_dir:
      raise UserError(f"problem {self.name} needs --data_dir")
    self.check_no_swap(data_dir)
    found = sorted(glob.glob(os.path.join(
        data_dir, f"vocab.{self.data_name}.*.model")))
    if len(found) > 1:
      raise UserError(f"several vocabularies for {self.data_name} in "
                       f"{data_dir}: {', '.join(found)}; keep one")
    return SubwordVocab.load(found[0] if found else self.vocab_path(data_dir))

  def check_no_swap(self, data_dir):
    """An error if a stopped ``t2t-datagen --overwrite`` was swapping new
    data in for this problem's (the files are half old, half new)."""
    for stage in staging.pending(data_dir):
      if os.path.basename(stage).startswith(
          f".overwrite-{self.data_name}."):
        raise CorpusError(
            f"{data_dir} holds {self.data_name}'s new data half swapped in "
            "by a stopped t2t-datagen --overwrite; run t2t-datagen "
            f"--problem={self.name} --data_dir={data_dir} to finish it")

  def vocab_sizes(self, data_dir):
    size = self.vocab(data_dir).size
    return size, size

  def shard_paths(self, data_dir, split):
    n = SHARDS[split.split(".")[0]]
    return [os.path.join(data_dir, f"{self.data_name}-{split}-{i:05d}-of-"
                         f"{n:05d}") for i in range(n)]

  def split_done(self, data_dir, split):
    if split == "train" and mixture.read_mix(
        mixture.mix_path(data_dir, self.data_name)):
      return True
    return all(os.path.exists(p) for p in self.shard_paths(data_dir, split))

  # -- generation -----------------------------------------------------------------
  def build_vocab(self, source, data_dir, byte_budget=DEFAULT_BYTE_BUDGET,
                  log=log_line):
    path = self.vocab_path(data_dir)
    if os.path.exists(path):
      vocab = SubwordVocab.load(path)
      log(f"vocabulary {path} exists; keeping it; "
          + spelling_report(vocab, itertools.chain.from_iterable(
              source.sample(lang, SPELLING_SAMPLE_BYTES)
              for lang in (self.source_lang, self.target_lang))))
      return vocab
    texts = []
    for lang in (self.source_lang, self.target_lang):
      texts.extend(source.sample(lang, byte_budget))
    log(f"building a {self.vocab_size}-piece {self.vocab_model_type} "
        f"{'lowercasing ' if self.lowercase else ''}"
        f"vocabulary from {len(texts):,} sampled lines "
        f"(byte budget {byte_budget:,} per language)")
    vocab = SubwordVocab.build(texts, self.vocab_size, self.vocab_model_type,
                               split_by_script=self.vocab_split_by_script,
                               symbols=self.vocab_symbols(source),
                               lowercase=bool(self.lowercase))
    vocab.save(path)
    note = "" if vocab.size == self.vocab_size else (
        f"; the text was too small for {self.vocab_size}")
    log(f"wrote {path} ({vocab.size} pieces{note})")
    return vocab

  def vocab_symbols(self, source):
    """Pieces the vocabulary must keep whole (e.g. parsing's brackets)."""
    del source
    return ()

  def encode_pair(self, vocab, source, target):
    return vocab.encode(source) + [EOS_ID], vocab.encode(target) + [EOS_ID]

  def write_split(self, source, vocab, data_dir, split, log=log_line,
                  log_every=50_000, name=None):
    """Encodes one split of ``source`` into its shards, named after
    ``name`` (default ``split``), and records them. Returns the
    SkipCounter."""
    skipped = SkipCounter()
    final = self.shard_paths(data_dir, name or split)
    count, lengths = shards.write_split(
        (self.encode_pair(vocab, s, t) for s, t in
         source.pairs(split, skipped)), final, split, data_dir, log, log_every)
    if count == 0:
      raise CorpusError(f"the {split} split of {source.describe()} has no "
                        f"usable sentence pairs ({skipped.summary()})")
    shards.record_split(self._manifest(data_dir), final, name or split,
                        lengths)
    log(f"{split}: {count:,} pairs in {len(final)} shard(s); "
        f"{skipped.summary()}")
    return skipped

  def write_mixture(self, source, vocab, data_dir, log=log_line):
    """Encodes each training corpus of a weighted mixture into its own
    shards (skipping those done) and records the weights
    (``data.mixture``)."""
    corpora = []
    recorded = mixture.read_mix(mixture.mix_path(data_dir, self.data_name))
    for index, (part, prefix, weight) in enumerate(source.mixture):
      split = mixture.part_split(index)
      if recorded and index < len(recorded) and \
          recorded[index]["prefix"] != prefix:
        raise CorpusError(
            f"{data_dir} holds train corpus {recorded[index]['prefix']} as "
            f"{split}, not {prefix}; change only the weights, or use "
            "another --data_dir")
      if self.split_done(data_dir, split):
        log(f"train corpus {prefix}: already generated; skipping")
      else:
        log(f"train corpus {prefix} (weight {weight:g}):")
        self.write_split(part, vocab, data_dir, "train", log, name=split)
      corpora.append((prefix, weight))
    mixture.write_mix(mixture.mix_path(data_dir, self.data_name), corpora)
    log("train: " + ", ".join(f"{p} x {w:g}" for p, w in corpora) +
        " mixed by sampling at training time")

  def generate_data(self, data_dir, tmp_dir=None, raw_dir=None,
                    raw_prefixes=None, byte_budget=DEFAULT_BYTE_BUDGET,
                    log=log_line):
    """Vocabulary and TFRecords for every split (and the BPE-dropout copies
    of train, if asked); skips what is done."""
    sampled.check(self.bpe_dropout, self.bpe_dropout_copies,
                  self.vocab_model_type)
    splits = ("train", "dev", "test")
    wanted = self._sampling_wanted(data_dir, log)
    copies = [sampled.split_name(k) for k in range(wanted["copies"])] \
        if wanted else []
    other = [p for p in glob.glob(os.path.join(
        data_dir, f"vocab.{self.data_name}.*.model"))
             if p != self.vocab_path(data_dir)]
    if other:
      raise CorpusError(
          f"{data_dir} already holds {os.path.basename(other[0])}, and its "
          f"shards are encoded with it; to build a {self.vocab_size}-piece "
          "vocabulary use another --data_dir")
    self._check_case(data_dir)
    mixing = isinstance((raw_prefixes or {}).get("train"), Mixture)
    if mixing and copies:
      raise CorpusError("--bpe_dropout copies one train corpus; it does not "
                        "mix with weighted corpora (--raw_prefixes)")
    raw_now = {}   # each raw file hashed once, checked, then recorded
    if raw_dir and os.path.isdir(raw_dir):
      raw = self.source(tmp_dir, raw_dir, raw_prefixes)
      raw_now = raw_record.fingerprints(
          raw.raw_files() if hasattr(raw, "raw_files") else [])
      raw_record.check_unchanged(self._read_manifest(data_dir).get("raw"),
                                 raw_now, data_dir, others=not mixing)
    if not mixing and all(self.split_done(data_dir, s) for s in
                          list(splits) + copies) and \
        os.path.exists(self.vocab_path(data_dir)):
      log(f"{self.data_name}: all data in {data_dir} is already generated")
      return
    source = self.source(tmp_dir, raw_dir, raw_prefixes)
    source.check(splits)
    # The folder is made once the inputs are known to be there, and goes
    # again if nothing could be written into it (a download that fails).
    made = not os.path.isdir(data_dir)
    os.makedirs(data_dir, exist_ok=True)
    try:
      self._write_data(source, data_dir, splits, wanted, raw_now,
                       byte_budget, log)
    except BaseException:
      # Made by this run and holding no vocabulary or shard: removed whole.
      if made and all(name.endswith(".shards.json")
                      for name in os.listdir(data_dir)):
        remove_tree(data_dir)
      raise

  def _write_data(self, source, data_dir, splits, wanted, raw_now,
                  byte_budget, log):
    """``generate_data``'s writing: the vocabulary, then each split."""
    if raw_now:
      self._update_manifest(data_dir, raw=raw_now)
    log(f"{self.data_name}: reading {source.describe()}")
    vocab = self.build_vocab(source, data_dir, byte_budget, log)
    for split in splits:
      if split == "train" and getattr(source, "mixture", None):
        self.write_mixture(source, vocab, data_dir, log)
      elif self.split_done(data_dir, split):
        log(f"{split}: already generated; skipping")
      elif split not in REQUIRED_SPLITS and not source.has_split(split):
        log(f"{split}: no {split} data in {source.describe()}; skipping")
      else:
        self.write_split(source, vocab, data_dir, split, log)
    if wanted:
      self._write_copies(source, vocab, data_dir, wanted, log)

  def _check_case(self, data_dir):
    """An error if ``data_dir``'s vocabulary keeps the case and
    ``lowercase`` is True, or the other way round."""
    path = self.vocab_path(data_dir)
    if self.lowercase is None or not os.path.exists(path):
      return
    held = SubwordVocab.load(path).lowercases
    if held != bool(self.lowercase):
      raise CorpusError(
          f"{path} {'lowercases' if held else 'keeps the case of'} all text, "
          f"and the shards beside it are encoded with it; for "
          f"--{'' if self.lowercase else 'no'}lowercase use another "
          "--data_dir")

  def _sampling_wanted(self, data_dir, log):
    """The BPE-dropout settings asked for ({"bpe_dropout", "copies"}, as
    the manifest records them; None for none); an error if ``data_dir``
    holds copies made with other settings."""
    recorded = self._read_manifest(data_dir).get("sampled")
    wanted = ({"bpe_dropout": float(self.bpe_dropout),
               "copies": int(self.bpe_dropout_copies)}
              if self.bpe_dropout else None)
    held = recorded and (f"{data_dir} holds {recorded['copies']} copies of "
                         f"train with BPE-dropout {recorded['bpe_dropout']:g}")
    if recorded and wanted and recorded != wanted:
      raise CorpusError(f"{held}; for other settings use another --data_dir")
    if recorded and not wanted:
      log(f"note: {held}, and training reads them; for the plain split "
          "alone use another --data_dir")
    return wanted

  def _write_copies(self, source, vocab, data_dir, wanted, log):
    # Recorded first: training on a half-written set of copies is an error
    # that names the missing one, not a silent fall-back to the plain split.
    self._update_manifest(data_dir, sampled=wanted)
    copies = wanted["copies"]
    log(f"train: encoding {copies} copies with BPE-dropout "
        f"{wanted['bpe_dropout']:g}")
    sampled.write_copies(self, source, vocab, data_dir,
                         wanted["bpe_dropout"], copies)
    lengths = self._read_manifest(data_dir)["lengths"]
    mean = lambda name: sum(int(k) * v for k, v in lengths[name].items()) / \
        max(1, sum(lengths[name].values()))
    log(f"train: {copies} copies, read one after another in training; "
        f"mean example length "
        f"{mean(sampled.split_name(0)):.1f} tokens against "
        f"{mean('train'):.1f} plain")

  # -- reading ----------------------------------------------------------------------
  def examples(self, split, data_dir, seed=None, input_context=None):
    if not data_dir:
      raise UserError(f"problem {self.name} needs --data_dir")
    mix = split == "train" and mixture.read_mix(
        mixture.mix_path(data_dir, self.data_name))
    if mix:   # endless: each corpus repeats, drawn by weight
      dataset = mixture.sample_mix(
          [self._records(data_dir, part["split"], seed, input_context).repeat()
           for part in mix], [part["weight"] for part in mix], seed)
    elif split == "train" and (
        drawn := self._read_manifest(data_dir).get("sampled")):
      dataset = sampled.one_after_another([
          self._records(data_dir, sampled.split_name(k),
                        None if seed is None else seed + k, input_context)
          for k in range(drawn["copies"])])
    else:
      dataset = self._records(data_dir, split, seed, input_context)
    if self.reverse:
      dataset = dataset.map(lambda ex: {"inputs": ex["targets"],
                                        "targets": ex["inputs"]})
    return dataset

  # The manifest (data.shards): what datagen wrote, read by readers.
  def _manifest(self, data_dir):
    return shards.manifest_path(data_dir, self.data_name)

  def _read_manifest(self, data_dir):
    return shards.read_manifest(self._manifest(data_dir))

  def _update_manifest(self, data_dir, **entries):
    shards.update_manifest(self._manifest(data_dir), **entries)

  def _write_manifest(self, data_dir, manifest):
    shards.write_manifest(self._manifest(data_dir), manifest)

  def count_longer(self, split, data_dir, max_length):
    """As ``Problem.count_longer``, from the lengths datagen recorded
    (no pass over the data); a mixed training split is endless: None."""
    if split == "train" and mixture.read_mix(
        mixture.mix_path(data_dir, self.data_name)):
      return None
    counts = shards.count_longer(self._manifest(data_dir), split, max_length)
    if counts is None:   # data written before lengths were recorded
      return super().count_longer(split, data_dir, max_length)
    return counts

  def data_names(self, data_dir):
    """The names of what datagen wrote for this problem in ``data_dir``
    (its vocabulary, shards and records: every file named after it), which
    ``t2t-datagen --overwrite`` replaces."""
    names = glob.glob(os.path.join(glob.escape(data_dir),
                                   f"{self.data_name}[-.]*"))
    names += glob.glob(os.path.join(glob.escape(data_dir),
                                    f"vocab.{self.data_name}.*"))
    return sorted({os.path.basename(n) for n in names})

  def check_generated(self, data_dir):
    """An error unless ``data_dir`` holds the vocabulary and every
    required split (after ``generate_data``)."""
    missing = [s for s in REQUIRED_SPLITS if not self.split_done(data_dir, s)]
    if not os.path.exists(self.vocab_path(data_dir)):
      missing.insert(0, "the vocabulary")
    if missing:
      raise CorpusError(f"the new data of {self.name} lacks "
                        f"{', '.join(missing)}; the old data is kept")

  def data_files(self, data_dir):
    """Every TFRecord shard of this problem in ``data_dir``."""
    return [f for f in glob.glob(os.path.join(
        data_dir, f"{self.data_name}-*-of-*")) if not f.endswith(".partial")]

  def _records(self, data_dir, split, seed, input_context):
    self.check_no_swap(data_dir)
    files = sorted(glob.glob(os.path.join(
        data_dir, f"{self.data_name}-{split}-*-of-*")))
    files = [f for f in files if not f.endswith(".partial")]
    shards.check_sizes(self._manifest(data_dir), files)
    if not files:
      raise MissingFileError(
          f"no {split} data for {self.data_name} in {data_dir}; run "
          f"t2t-datagen --problem={self.name} --data_dir={data_dir}")
    return pipeline.read_records(files, shuffle_files=split.startswith(
        "train"), seed=seed, input_context=input_context)
