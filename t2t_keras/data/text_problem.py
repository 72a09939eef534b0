"""Text-to-text problems: raw sentence pairs -> a shared subword vocabulary
-> sharded TFRecords -> length-bucketed batches.

Data layout in ``data_dir`` (what t2t-datagen writes):
  vocab.<data_name>.<vocab_size>.model          the SentencePiece model
  <data_name>-<split>-<i>-of-<n>                 TFRecord shards of examples
Shards are written under a temporary name and renamed when the split is
complete, so an interrupted run leaves nothing that looks finished, and a
re-run skips the splits (and the vocabulary) that are done. Each finished
shard's size goes to ``<data_name>.shards.json``; readers check it, since a
shard cut inside a record's header reads as a clean end of file and would
lose its remaining examples silently.
"""

import collections
import contextlib
import glob
import json
import os
import time

import tensorflow as tf

from t2t_keras import json_files
from t2t_keras.data import mixture, pipeline, raw_record, sampled
from t2t_keras.data.corpus import CorpusError, SkipCounter
from t2t_keras.data.problem import Problem
from t2t_keras.data.sources import LocalFiles, Mixture, REQUIRED_SPLITS
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.errors import Interrupted, MissingFileError, UserError
from t2t_keras.ids import EOS_ID
from t2t_keras.logs import log_line
from t2t_keras.outputs import output_file

DEFAULT_BYTE_BUDGET = 1_000_000
SHARDS = {"train": 10, "dev": 1, "test": 1}


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
    found = sorted(glob.glob(os.path.join(
        data_dir, f"vocab.{self.data_name}.*.model")))
    if len(found) > 1:
      raise UserError(f"several vocabularies for {self.data_name} in "
                       f"{data_dir}: {', '.join(found)}; keep one")
    return SubwordVocab.load(found[0] if found else self.vocab_path(data_dir))

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
      log(f"vocabulary {path} exists; keeping it")
      return SubwordVocab.load(path)
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
    ``name`` (default ``split``). Returns the SkipCounter."""
    skipped = SkipCounter()
    final = self.shard_paths(data_dir, name or split)
    partial = [p + ".partial" for p in final]
    writers = [tf.io.TFRecordWriter(p) for p in partial]
    start, count, lengths = time.time(), 0, collections.Counter()
    try:
      try:
        for source_text, target_text in source.pairs(split, skipped):
          inputs, targets = self.encode_pair(vocab, source_text, target_text)
          writers[count % len(writers)].write(
              pipeline.encode_example(inputs, targets))
          lengths[max(len(inputs), len(targets))] += 1
          count += 1
          if count % log_every == 0:
            log(f"  {split}: {count:,} pairs encoded "
                f"({count / (time.time() - start):,.0f}/s)")
      finally:
        for w in writers:
          w.close()
    except (tf.errors.OpError, OSError, Interrupted, KeyboardInterrupt) as e:
      # A full disk (TensorFlow's writer reports it as an OpError), a
      # signal: the shards in the making go, the finished ones stay.
      for p in partial:
        with contextlib.suppress(FileNotFoundError):
          os.remove(p)
      if isinstance(e, (Interrupted, KeyboardInterrupt)):
        raise
      why = getattr(e, "message", None) or getattr(e, "strerror", None) or e
      raise CorpusError(
          f"could not write the {split} shards in {data_dir}: "
          f"{str(why).split('; ')[-1]} (a full disk, or a file-size limit?); "
          "no partial shard was left, and t2t-datagen again writes what is "
          "missing") from None
    if count == 0:
      for p in partial:
        os.remove(p)
      raise CorpusError(f"the {split} split of {source.describe()} has no "
                        f"usable sentence pairs ({skipped.summary()})")
    for p, f in zip(partial, final):
      os.replace(p, f)
    self._record(data_dir, final, name or split, lengths)
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
                                 raw_now, data_dir)
    if not mixing and all(self.split_done(data_dir, s) for s in
                          list(splits) + copies) and \
        os.path.exists(self.vocab_path(data_dir)):
      log(f"{self.data_name}: all data in {data_dir} is already generated")
      return
    source = self.source(tmp_dir, raw_dir, raw_prefixes)
    source.check(splits)
    # The folder is made once the inputs are known to be there.
    os.makedirs(data_dir, exist_ok=True)
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
    manifest = self._read_manifest(data_dir)
    manifest["sampled"] = wanted
    self._write_manifest(data_dir, manifest)
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

  def _manifest(self, data_dir):
    return os.path.join(data_dir, f"{self.data_name}.shards.json")

  def _read_manifest(self, data_dir):
    """The manifest datagen wrote ({"sizes": {shard: bytes}, "lengths":
    {split: {length: count}}}), {"sizes": {}} when there is none; a damaged
    one is a one-line error that names it."""
    path = self._manifest(data_dir)
    if not os.path.exists(path):
      return {"sizes": {}}
    manifest = json_files.load(path, {"sizes": dict}, "run t2t-datagen again")
    for shard, size in manifest["sizes"].items():
      json_files.check(path, f"the size of {shard}", size, int,
                       "run t2t-datagen again")
    return manifest

  def _record(self, data_dir, paths, name, lengths):
    """Records the byte size of each of ``paths`` (the shards of split
    ``name``) and the split's example lengths (a Counter of the longer of
    inputs and targets, in tokens) in the manifest."""
    manifest = self._read_manifest(data_dir)
    manifest["sizes"].update(
        {os.path.basename(p): os.path.getsize(p) for p in paths})
    manifest.setdefault("lengths", {})[name] = {
        str(k): v for k, v in sorted(lengths.items())}
    self._write_manifest(data_dir, manifest)

  def _update_manifest(self, data_dir, **entries):
    manifest = self._read_manifest(data_dir)
    manifest.update(entries)
    self._write_manifest(data_dir, manifest)

  def _write_manifest(self, data_dir, manifest):
    path = self._manifest(data_dir)
    with output_file(path, "w", encoding="utf-8") as f:
      json.dump(manifest, f, indent=1, sort_keys=True)

  def count_longer(self, split, data_dir, max_length):
    """As ``Problem.count_longer``, from the lengths datagen recorded
    (no pass over the data); a mixed training split is endless: None."""
    if split == "train" and mixture.read_mix(
        mixture.mix_path(data_dir, self.data_name)):
      return None
    recorded = self._read_manifest(data_dir).get("lengths", {})
    if split not in recorded:   # data written before lengths were recorded
      return super().count_longer(split, data_dir, max_length)
    counts = {int(k): v for k, v in recorded[split].items()}
    return (sum(counts.values()),
            sum(v for k, v in counts.items() if k > max_length))

  def check_shards(self, data_dir, files):
    """A one-line error for a shard whose size is not the one datagen
    recorded (data written before the record is not checked)."""
    sizes = self._read_manifest(data_dir)["sizes"]
    for name in files:
      expected = sizes.get(os.path.basename(name))
      if expected is not None and os.path.getsize(name) != expected:
        raise UserError(
            f"{name} is damaged: {os.path.getsize(name):,} bytes, datagen "
            f"wrote {expected:,}; delete it and run t2t-datagen again with "
            "the same flags: it rewrites the splits whose shards are missing")

  def data_files(self, data_dir):
    """Every TFRecord shard of this problem in ``data_dir``."""
    return [f for f in glob.glob(os.path.join(
        data_dir, f"{self.data_name}-*-of-*")) if not f.endswith(".partial")]

  def _records(self, data_dir, split, seed, input_context):
    files = sorted(glob.glob(os.path.join(
        data_dir, f"{self.data_name}-{split}-*-of-*")))
    files = [f for f in files if not f.endswith(".partial")]
    self.check_shards(data_dir, files)
    if not files:
      raise MissingFileError(
          f"no {split} data for {self.data_name} in {data_dir}; run "
          f"t2t-datagen --problem={self.name} --data_dir={data_dir}")
    return pipeline.read_records(files, shuffle_files=split.startswith(
        "train"), seed=seed, input_context=input_context)
