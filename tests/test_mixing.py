"""Several training corpora mixed by weight (--raw_prefixes='train=a:0.7,
b:0.3')."""

import pytest

from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate
from t2t_keras.data.sources import Mixture, parse_prefixes
from t2t_keras.hparams import HParams


def _write(path, lines):
  path.write_text("".join(l + "\n" for l in lines), encoding="utf-8")


@pytest.fixture(scope="module")
def mixed_data(tmp_path_factory):
  raw = tmp_path_factory.mktemp("raw")
  for name, word, n in (("a", "alpha", 400), ("b", "beta", 100)):
    _write(raw / f"{name}.en", [f"{word} {i} one two" for i in range(n)])
    _write(raw / f"{name}.de", [f"{word} {i} eins zwei" for i in range(n)])
  for split in ("dev", "test"):
    _write(raw / f"{split}.en", ["alpha 1 one", "beta 2 two"])
    _write(raw / f"{split}.de", ["alpha 1 eins", "beta 2 zwei"])
  data = tmp_path_factory.mktemp("data")
  logs = []
  problem = generate("translate_local", str(data), raw_dir=str(raw),
                     raw_prefixes="train=a:0.7,b:0.3", log=logs.append,
                     source_lang="en", target_lang="de", vocab_size=320)
  return problem, str(data), str(raw), logs


def test_observed_mix_is_within_two_percent(mixed_data):
  problem, data, _, logs = mixed_data
  assert any("mixed by sampling at training time" in l for l in logs)
  vocab = problem.vocab(data)
  hparams = HParams(batch_size=256, max_length=64)
  counts, seen = {"alpha": 0, "beta": 0}, 0
  for batch in problem.batches("train", data, hparams, seed=7):
    for row in batch["inputs"].numpy():
      counts[vocab.decode(row).split()[0]] += 1
      seen += 1
    if seen >= 10_000:
      break
  # Corpus a has 4x the lines of b, but the weights decide: 0.7 / 0.3.
  assert abs(counts["alpha"] / seen - 0.7) < 0.02, counts
  assert abs(counts["beta"] / seen - 0.3) < 0.02, counts


def test_reweighting_keeps_the_shards(mixed_data, tmp_path):
  problem, data, raw, _ = mixed_data
  logs = []
  generate("translate_local", data, raw_dir=raw,
           raw_prefixes="train=a:0.5,b:0.5", log=logs.append,
           source_lang="en", target_lang="de", vocab_size=320)
  assert sum("already generated; skipping" in l for l in logs) >= 2
  vocab = problem.vocab(data)
  words = [vocab.decode(ex["inputs"]).split()[0] for ex in
           problem.examples("train", data, seed=3).take(4000)
           .as_numpy_iterator()]
  assert abs(words.count("alpha") / len(words) - 0.5) < 0.03
  with pytest.raises(CorpusError, match="not b"):
    generate("translate_local", data, raw_dir=raw,
             raw_prefixes="train=a:0.5,b:0.5".replace("a:", "b:", 1)
             .replace(",b:", ",a:"), log=logs.append, source_lang="en",
             target_lang="de", vocab_size=320)


@pytest.mark.parametrize("text, message", [
    ("train=a:0.7,b", "need a weight each"),
    ("train=a:x,b:0.3", "must be a number > 0, got 'x'"),
    ("train=a:0,b:1", "must be a number > 0"),
    ("dev=a:0.5,b:0.5", "only train can mix"),
    ("valid=a", "malformed raw prefix 'valid=a'"),
])
def test_malformed_weights_are_named(text, message):
  with pytest.raises(CorpusError, match=message):
    parse_prefixes(text)


def test_prefixes_parse():
  assert parse_prefixes("train=x/a:0.7,x/b:0.3,dev=d") == {
      "train": Mixture([("x/a", 0.7), ("x/b", 0.3)]), "dev": "d"}
  assert parse_prefixes("train=a,dev=d") == {"train": "a", "dev": "d"}
