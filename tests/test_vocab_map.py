"""Fine-tuning on another vocabulary: --warm_start_vocab=map."""

import glob
import json
import os
import shutil

import numpy as np
import pytest

from conftest import TINY_RUN
from t2t_keras.io import checkpoint_io
from t2t_keras.data.datagen import generate
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.errors import UserError
from t2t_keras.models.builder import build_model_from_dir
from t2t_keras.training.run import RunConfig, train
from test_warm_start import _train


@pytest.fixture(scope="module")
def unigram_data(tmp_path_factory):
  """translate_synthetic encoded with a unigram vocabulary: another size
  and other pieces than the trained run's BPE one, most shared."""
  data = str(tmp_path_factory.mktemp("unigram") / "data")
  generate("translate_synthetic", data, vocab_size=500,
           vocab_model_type="unigram", log=lambda _: None)
  return data


def _vocab(data):
  return SubwordVocab.load(glob.glob(os.path.join(data, "vocab.*.model"))[0])


def _embeddings(run, checkpoint):
  model, _, _ = build_model_from_dir(run)
  import tensorflow as tf
  checkpoint_io.restore(tf.train.Checkpoint(model=model), checkpoint)
  return model.target_embedding.embeddings.numpy()


def test_rows_are_kept_by_piece_and_new_ones_are_means(trained_run,
                                                      unigram_data,
                                                      tmp_path):
  data, source = trained_run
  out = str(tmp_path / "mapped")
  # One update at learning rate 0 writes the mapped weights unchanged.
  _, log = _train(unigram_data, out, 1, TINY_RUN + ",learning_rate=0.0",
                  warm_start_from=source, warm_start_vocab="map")
  old, new = _vocab(data), _vocab(unigram_data)
  old_pieces = {p: i for i, p in enumerate(old.all_pieces())}
  new_pieces = new.all_pieces()
  kept = sum(p in old_pieces for p in new_pieces)
  assert f"{kept:,} of {new.size:,} pieces kept from {source}, " \
         f"{new.size - kept:,} new" in log, log
  assert 0 < new.size - kept < kept
  before = _embeddings(source, checkpoint_io.newest_readable(source))
  after = _embeddings(out, os.path.join(out, "ckpt-1"))
  assert after.shape == (new.size, before.shape[1])
  checked_new = 0
  for i, piece in enumerate(new_pieces):
    if piece in old_pieces:
      np.testing.assert_array_equal(after[i], before[old_pieces[piece]])
      continue
    # The old vocabulary's spelling of the piece, as a word's start or
    # inside a word (a leading U+2581 is a word start).
    text = piece.replace("\u2581", " ")
    word_start = text.startswith(" ")
    spelled = old.encode(text.lstrip(" ")) if word_start else \
        old.encode("x" + text)[1:]
    if word_start or old.pieces(old.encode("x" + text))[0] == "\u2581x":
      np.testing.assert_allclose(after[i], before[spelled].mean(axis=0),
                                 rtol=1e-6, atol=1e-7)
      checked_new += 1
  assert checked_new >= 5


def test_a_mapped_start_learns_far_faster_than_a_fresh_one(trained_run,
                                                          unigram_data,
                                                          tmp_path):
  _, source = trained_run
  mapped, _ = _train(unigram_data, str(tmp_path / "mapped"), 20,
                     warm_start_from=source, warm_start_vocab="map")
  fresh, _ = _train(unigram_data, str(tmp_path / "fresh"), 20)
  # 0.46 against 0.27 when written.
  assert mapped["accuracy"] > fresh["accuracy"] + 0.15, (mapped, fresh)


def test_without_map_another_vocabulary_names_the_flag(trained_run,
                                                      unigram_data, tmp_path):
  _, source = trained_run
  out = tmp_path / "refused"
  with pytest.raises(UserError, match="--warm_start_vocab=map"):
    _train(unigram_data, str(out), 1, warm_start_from=source)
  assert not out.exists()


def _refused(data, source, out, match):
  with pytest.raises(UserError, match=match) as e:
    _train(data, str(out), 1, warm_start_from=str(source),
           warm_start_vocab="map")
  assert "\n" not in str(e.value)
  assert not out.exists(), "the new run directory was written"


def test_bad_sources_are_one_line_and_write_nothing(trained_run,
                                                   unigram_data, tmp_path,
                                                   shared_data):
  data, source = trained_run
  # Not a run: a folder without checkpoints, a path that is nothing.
  empty = tmp_path / "empty"
  empty.mkdir()
  _refused(unigram_data, empty, tmp_path / "a", "no checkpoint that reads")
  _refused(unigram_data, tmp_path / "nothing", tmp_path / "b",
           "neither a run directory nor a checkpoint")
  # The source's vocabulary (in the data directory its model.json names)
  # does not read.
  run = tmp_path / "source"
  shutil.copytree(source, run)
  bad_data = tmp_path / "bad_data"
  bad_data.mkdir()
  for path in glob.glob(os.path.join(data, "vocab.*.model")):
    (bad_data / os.path.basename(path)).write_bytes(b"not a model\n")
  spec = json.loads((run / "model.json").read_text(encoding="utf-8"))
  spec["data_dir"] = str(bad_data)
  (run / "model.json").write_text(json.dumps(spec), encoding="utf-8")
  _refused(unigram_data, run, tmp_path / "c", "vocab.translate_synthetic"
           ".600.model is damaged")
  # A vocabulary of real German and English text shares under 10% of its
  # pieces with the synthetic one.
  real = str(tmp_path / "real")
  raw = tmp_path / "raw"
  raw.mkdir()
  for lang in ("en", "de"):
    with open(os.path.join(shared_data, "multi30k", f"train.{lang}"),
              encoding="utf-8") as f:
      lines = [next(f) for _ in range(8000)]
    for split in ("train", "dev"):
      (raw / f"{split}.{lang}").write_text("".join(lines), encoding="utf-8")
  generate("translate_ende", real, raw_dir=str(raw),
           raw_prefixes="train=train,dev=dev", vocab_size=6000,
           log=lambda _: None)
  with pytest.raises(UserError, match=r"pieces of .* are in .*, under 10%") \
      as e:
    train(RunConfig("translate_ende", "transformer_tiny",
                    str(tmp_path / "d"), data_dir=real, train_steps=1,
                    hparams_overrides=TINY_RUN, eval_bleu=False,
                    warm_start_from=source, warm_start_vocab="map"),
          log=lambda _: None)
  assert "\n" not in str(e.value)
  assert not (tmp_path / "d").exists()
