"""Inputs people really have: a byte order mark at a file's start (and at
a line's, where files were concatenated) is not text."""

import io
import os
import subprocess
import sys

import pytest

from commands import REPO
from t2t_keras.data.corpus import read_parallel
from t2t_keras.io.lines import LineReader

BOM = "\ufeff"


def test_a_bom_is_not_text(tmp_path):
  src, tgt = tmp_path / "train.en", tmp_path / "train.de"
  src.write_text(BOM + "a cat\n" + BOM + "a dog\n", encoding="utf-8")
  tgt.write_text(BOM + "eine Katze\neinen Hund\n", encoding="utf-8")
  assert list(read_parallel(str(src), str(tgt))) == [
      ("a cat", "eine Katze"), ("a dog", "einen Hund")]
  raw = (BOM + "one\n" + BOM + "two\nthree").encode("utf-8")
  assert list(LineReader(io.BytesIO(raw), "x")) == ["one", "two", "three"]


def test_bleu_reads_past_a_bom(tmp_path):
  ref, hyp = tmp_path / "ref", tmp_path / "hyp"
  ref.write_text("the cat sat on the mat\n", encoding="utf-8")
  hyp.write_text(BOM + "the cat sat on the mat\n", encoding="utf-8")
  done = subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_bleu", f"--translation={hyp}",
       f"--reference={ref}", "--metrics=bleu,chrf", "--tokenized_lang="],
      cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
  assert done.returncode == 0, done.stderr
  assert "BLEU (sacreBLEU, detokenized) = 100.00" in done.stdout, done.stdout
  assert "chrF (sacreBLEU) = 100.00" in done.stdout, done.stdout


def test_datagen_refuses_a_corpus_changed_since(tmp_path):
  from t2t_keras.data.corpus import CorpusError
  from t2t_keras.data.datagen import generate
  raw, data = tmp_path / "raw", str(tmp_path / "data")
  raw.mkdir()
  words = "the dog sees a cat near the house with a small tree".split()
  for lang in ("en", "de"):
    for split in ("train", "dev"):
      (raw / f"{split}.{lang}").write_text(
          "".join(" ".join(words[i:] + words[:i]) + "\n" for i in range(11)),
          encoding="utf-8")
  options = dict(raw_dir=str(raw), raw_prefixes="train=train,dev=dev",
                 vocab_size=300, log=lambda _: None)
  generate("translate_ende", data, **options)
  generate("translate_ende", data, **options)   # unchanged: goes through
  before = {n: os.path.getmtime(os.path.join(data, n))
            for n in os.listdir(data)}
  (raw / "train.de").write_text("corrected\n" * 11, encoding="utf-8")
  with pytest.raises(CorpusError, match=f"{raw / 'train.de'} changed since "
                     f"{data} was made from it"):
    generate("translate_ende", data, **options)
  assert {n: os.path.getmtime(os.path.join(data, n))
          for n in os.listdir(data)} == before
  # Other files (another --raw_data_dir) are refused too, naming the old
  # ones; the same files moved elsewhere are not.
  (raw / "train.de").write_text("".join(
      " ".join(words[i:] + words[:i]) + "\n" for i in range(11)),
      encoding="utf-8")
  moved = tmp_path / "moved"
  os.rename(raw, moved)
  generate("translate_ende", data, **dict(options, raw_dir=str(moved)))
  (moved / "dev.en").write_text("another dev set\n" * 11, encoding="utf-8")
  other = tmp_path / "other"
  other.mkdir()
  for name in os.listdir(moved):
    (other / name).write_bytes((moved / name).read_bytes())
  with pytest.raises(CorpusError, match=f"{data} was made from other raw "
                     f"files than {other / 'dev.en'}"):
    generate("translate_ende", data, **dict(options, raw_dir=str(other)))
  # --overwrite makes it again from them.
  generate("translate_ende", data, overwrite=True,
           **dict(options, raw_dir=str(other)))
  generate("translate_ende", data, **dict(options, raw_dir=str(other)))


def test_a_1_mb_dev_line_is_skipped_from_the_dev_loss_and_counted(tmp_path):
  from t2t_keras.data.datagen import generate
  from t2t_keras.training.run import RunConfig, train
  raw, data = tmp_path / "raw", str(tmp_path / "data")
  raw.mkdir()
  words = "the dog sees a cat near the house with a small tree".split()
  lines = [" ".join(words[i:] + words[:i]) for i in range(11)] * 4
  huge = " ".join(f"w{i}" for i in range(200_000))   # about 1.3 MB
  assert len(huge) > 1_000_000
  for lang in ("en", "de"):
    (raw / f"train.{lang}").write_text("\n".join(lines) + "\n",
                                       encoding="utf-8")
    (raw / f"dev.{lang}").write_text("\n".join(lines[:3] + [huge]) + "\n",
                                     encoding="utf-8")
  generate("translate_ende", data, raw_dir=str(raw),
           raw_prefixes="train=train,dev=dev", vocab_size=300,
           log=lambda _: None)
  log = []
  metrics = train(RunConfig(
      "translate_ende", "transformer_tiny", str(tmp_path / "run"),
      data_dir=data, train_steps=2, eval_bleu=False,
      hparams_overrides="hidden_size=32,filter_size=64,num_hidden_layers=1,"
      "num_heads=2,batch_size=512"), log=log.append)
  said = [l for l in log if l.startswith("dev: 1 of 4 examples longer")]
  assert said and "1 longer than 1,024 tokens skipped from the dev loss" \
      in said[0], log
  assert metrics["loss"] > 0
