"""BPE-dropout copies of the training pairs (t2t-datagen --bpe_dropout)."""

import glob
import os

import pytest

from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate
from t2t_keras.errors import UserError

WORDS = ("house garden window mountain river sunshine umbrella bicycle "
         "children playing football together outside").split()


def _write(path, lines):
  path.write_text("".join(l + "\n" for l in lines), encoding="utf-8")


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
  raw = tmp_path_factory.mktemp("raw")
  lines = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(6))
           for i in range(60)]
  for split in ("train", "dev", "test"):
    _write(raw / f"{split}.en", lines)
    _write(raw / f"{split}.de", [l.upper() for l in lines])
  return str(raw)


def _generate(raw, data, logs=None, **options):
  return generate("translate_local", str(data), raw_dir=raw,
                  log=(logs if logs is not None else []).append,
                  source_lang="en", target_lang="de", vocab_size=400,
                  **options)


def _pairs(problem, data, split):
  return [(tuple(ex["inputs"]), tuple(ex["targets"])) for ex in
          problem.examples(split, data).as_numpy_iterator()]


@pytest.fixture(scope="module")
def copies(raw, tmp_path_factory):
  data = str(tmp_path_factory.mktemp("data"))
  logs = []
  problem = _generate(raw, data, logs, bpe_dropout=0.3, bpe_dropout_copies=3)
  return problem, data, logs


def test_copies_are_other_segmentations_of_the_same_text(copies):
  problem, data, logs = copies
  assert any("3 copies, read one after another" in l for l in logs), logs
  vocab = problem.vocab(data)
  plain = _pairs(problem, data, "dev")   # the training lines, plainly
  drawn = [_pairs(problem, data, f"train.sampled{k}") for k in range(3)]
  text = sorted(vocab.decode(i) for i, _ in plain)
  for copy in drawn:
    assert sorted(vocab.decode(i) for i, _ in copy) == text   # lossless
    assert sorted(copy) != sorted(plain)
    # Dropped merges leave more, shorter pieces.
    assert sum(len(i) for i, _ in copy) > sum(len(i) for i, _ in plain)
  assert sorted(drawn[0]) != sorted(drawn[1])
  # Dev and test keep the plain segmentation.
  assert [vocab.encode(vocab.decode(i)) + [1] for i, _ in plain] == \
      [list(i) for i, _ in plain]


def test_training_reads_the_copies_one_after_another(copies):
  problem, data, _ = copies
  stream = [(tuple(ex["inputs"]), tuple(ex["targets"])) for ex in
            problem.examples("train", data, seed=5).as_numpy_iterator()]
  n = len(stream) // 3
  assert n == 60
  for k in range(3):
    assert sorted(stream[k * n:(k + 1) * n]) == \
        sorted(_pairs(problem, data, f"train.sampled{k}"))


def test_the_same_settings_write_the_same_bytes_and_resume(
    copies, raw, tmp_path):
  problem, data, _ = copies
  logs = []
  _generate(raw, data, logs, bpe_dropout=0.3, bpe_dropout_copies=3)
  assert any("already generated" in l for l in logs), logs
  # Without the flag the copies stay in use, and datagen says so.
  logs = []
  _generate(raw, data, logs, bpe_dropout=0.0)
  assert any("holds 3 copies of train with BPE-dropout 0.3, and training "
             "reads them" in l for l in logs), logs
  other = tmp_path / "again"
  _generate(raw, other, bpe_dropout=0.3, bpe_dropout_copies=3)
  # An interrupted datagen: copy 1 lost; a re-run writes it again (alike
  # within this process: SentencePiece's seeded sampling is not repeatable
  # across processes).
  lost = sorted(glob.glob(str(other / "*-train.sampled1-*")))
  for path in lost:
    os.remove(path)
  _generate(raw, other, bpe_dropout=0.3, bpe_dropout_copies=3)
  for path in glob.glob(os.path.join(data, "*-train.sampled*-of-*")):
    with open(path, "rb") as a, \
        open(other / os.path.basename(path), "rb") as b:
      assert a.read() == b.read(), path
  assert len(lost) == 10


def test_other_settings_in_the_same_directory_are_refused(copies, raw):
  _, data, _ = copies
  with pytest.raises(CorpusError, match="holds 3 copies of train with "
                     "BPE-dropout 0.3; for other settings use another"):
    _generate(raw, data, bpe_dropout=0.1, bpe_dropout_copies=3)


@pytest.mark.parametrize("options, message", [
    (dict(bpe_dropout=1.5), r"--bpe_dropout must be in \[0, 1\), got 1.5"),
    (dict(bpe_dropout=0.1, bpe_dropout_copies=0),
     "--bpe_dropout_copies must be >= 1, got 0"),
    (dict(bpe_dropout=0.1, vocab_model_type="unigram"),
     "--bpe_dropout needs a bpe vocabulary, not 'unigram'"),
])
def test_bad_settings_are_named(raw, tmp_path, options, message):
  with pytest.raises(UserError, match=message):
    _generate(raw, tmp_path, **options)
