"""Text problems end to end: local files and TFDS -> TFRecords -> batches,
and bad input."""

import os
import subprocess

import pytest
import tensorflow as tf

from commands import python
from t2t_keras import registry
from t2t_keras.data import pipeline
from t2t_keras.data.corpus import CorpusError
from t2t_keras.data.datagen import generate
from t2t_keras.hparams import HParams

MULTI30K = ("train=multi30k/train,dev=wmt14/newstest2013,"
            "test=multi30k/test_2016_flickr")


def decoded(problem, data_dir, split, limit=None):
  vocab = problem.vocab(data_dir)
  out = []
  for ex in problem.examples(split, data_dir).take(limit or -1):
    out.append((vocab.decode(ex["inputs"].numpy()),
                vocab.decode(ex["targets"].numpy())))
  return out


def raw_lines(path):
  with open(path, encoding="utf-8") as f:
    return [line.strip() for line in f]


@pytest.fixture(scope="module")
def ende(shared_data, tmp_path_factory):
  data_dir = str(tmp_path_factory.mktemp("ende"))
  log = []
  generate("translate_ende", data_dir, raw_dir=shared_data,
           raw_prefixes=MULTI30K, vocab_size=8000, log=log.append)
  return data_dir, log


def test_translate_ende_from_local_files(ende, shared_data):
  data_dir, log = ende
  problem = registry.problem("translate_ende")
  assert problem.vocab_sizes(data_dir) == (8000, 8000)
  counts = {"train": 29000, "dev": 3000, "test": 1000}
  # Examples decode back to the raw lines, EOS-terminated, in order.
  dev = decoded(problem, data_dir, "dev", limit=50)
  en = raw_lines(os.path.join(shared_data, "wmt14", "newstest2013.en"))
  de = raw_lines(os.path.join(shared_data, "wmt14", "newstest2013.de"))
  assert dev == list(zip(en[:50], de[:50]))
  first = next(iter(problem.examples("dev", data_dir)))
  assert first["inputs"].numpy()[-1] == 1 and first["targets"].numpy()[-1] == 1
  # Every line is an example (a pass over the shards counts them), and the
  # trainer's count of over-long examples comes from the lengths datagen
  # recorded, which equal that pass.
  for split, limit in (("train", 40), ("dev", 60), ("test", 256)):
    recorded = problem.count_longer(split, data_dir, limit)
    assert recorded == pipeline.count_longer(
        problem.examples(split, data_dir), limit)
    assert recorded[0] == counts[split], (split, recorded, log)
    assert (recorded[1] > 0) == (limit < 256)


def test_rerun_skips_and_rev_swaps(ende):
  data_dir, _ = ende
  log = []
  generate("translate_ende", data_dir, vocab_size=8000, log=log.append)
  assert log == [f"translate_ende: all data in {data_dir} is already "
                 "generated"]
  forward = decoded(registry.problem("translate_ende"), data_dir, "dev", 5)
  reverse = decoded(registry.problem("translate_ende_rev"), data_dir, "dev", 5)
  assert reverse == [(t, s) for s, t in forward]


def test_other_vocab_size_in_same_data_dir_is_refused(ende):
  data_dir, _ = ende
  with pytest.raises(CorpusError, match="already holds vocab.translate_ende"
                     ".8000.model"):
    generate("translate_ende", data_dir, vocab_size=4000, log=lambda _: None)


def test_token_batches(ende):
  data_dir, _ = ende
  problem = registry.problem("translate_ende")
  hp = HParams(batch_size=1024, max_length=64)
  for batch in problem.batches("train", data_dir, hp, seed=1).take(40):
    rows, length = batch["inputs"].shape[0], max(batch["inputs"].shape[1],
                                                 batch["targets"].shape[1])
    assert length <= 64
    assert rows * length <= 1024 * 1.1 + 64  # within its bucket's budget
  first = [b["inputs"].numpy().tolist()
           for b in problem.batches("train", data_dir, hp, seed=1).take(3)]
  again = [b["inputs"].numpy().tolist()
           for b in problem.batches("train", data_dir, hp, seed=1).take(3)]
  assert first == again                              # deterministic when seeded
  dev_rows = sum(b["inputs"].shape[0]
                 for b in problem.batches("dev", data_dir, hp))
  assert dev_rows == 3000                            # one pass, nothing dropped


def test_shards_split_across_input_pipelines(ende):
  data_dir, _ = ende
  problem = registry.problem("translate_ende")

  def firsts(pipeline_id):
    context = tf.distribute.InputContext(num_input_pipelines=2,
                                         input_pipeline_id=pipeline_id)
    return {tuple(ex["inputs"].numpy()) for ex in
            problem.examples("train", data_dir, input_context=context)}

  a, b = firsts(0), firsts(1)
  assert len(a) + len(b) >= 28000 and len(a & b) < 200   # duplicates in data


@pytest.mark.parametrize("pipelines", [3, 4])
def test_every_example_is_read_at_one_rate_by_any_number_of_pipelines(
    ende, pipelines):
  """10 shards over 3 or 4 pipelines (workers), which feed the same number
  of batches: each pipeline holds as many examples as another within 5%
  (by file, 3 of 10 shards against 4 made some examples come at 3/4 the
  rate), and together they hold each record once."""
  data_dir, _ = ende
  files = registry.problem("translate_ende").shard_paths(data_dir, "train")
  assert len(files) == 10
  every = sum(1 for _ in pipeline.read_records(files))
  sizes = []
  for index in range(pipelines):
    context = tf.distribute.InputContext(num_input_pipelines=pipelines,
                                         input_pipeline_id=index)
    sizes.append(sum(1 for _ in pipeline.read_records(
        files, shuffle_files=True, seed=3, input_context=context)))
  assert sum(sizes) == every, (sizes, every)
  assert max(sizes) <= 1.05 * min(sizes), sizes


def test_bucket_boundaries():
  bounds = pipeline.bucket_boundaries(64)
  assert bounds[0] == 8 and bounds[-1] == 64
  assert all(b > a for a, b in zip(bounds, bounds[1:]))
  assert all(b / a <= 1.15 or b - a == 1 for a, b in zip(bounds, bounds[1:]))


def test_tfds_path_on_tfds_test_data_through_datagen_and_training(tmp_path):
  """translate_ende's TFDS source on the examples tfds.testing makes in
  place of wmt14_translate: datagen, then a few training steps."""
  import tensorflow_datasets as tfds
  from t2t_keras.training.run import RunConfig, train
  log = []
  data = str(tmp_path / "data")
  with tfds.testing.mock_data(num_examples=40):
    generate("translate_ende", data, tmp_dir=str(tmp_path / "tmp"),
             vocab_size=300, log=log.append)
  assert any("TensorFlow Datasets wmt14_translate/de-en" in l for l in log)
  problem = registry.problem("translate_ende")
  assert sum(1 for _ in problem.examples("dev", data)) > 0
  lines = []
  train(RunConfig("translate_ende", "transformer_tiny", str(tmp_path / "run"),
                  data_dir=data, train_steps=3, eval_bleu=False,
                  hparams_overrides="hidden_size=32,filter_size=64,"
                  "num_hidden_layers=1,batch_size=4096"), log=lines.append)
  assert any(l.startswith("step 3: dev loss") for l in lines), lines


@pytest.mark.parametrize("problem_name", ["translate_ende", "translate_enfr"])
def test_tfds_real_builder_offline_is_one_line_and_leaves_no_data_dir(
    tmp_path, monkeypatch, problem_name):
  """The real wmt14_translate builder (its imports, its download manager)
  as far as the download, with every connection refused: one line naming
  the dataset and the local-files way, and no data directory."""
  from tensorflow_datasets.core.download import downloader
  from t2t_keras.errors import UserError
  monkeypatch.setattr(downloader, "MAX_RETRIES", 0)   # fail at once
  for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
    monkeypatch.setenv(proxy, "http://127.0.0.1:9")  # refused
  monkeypatch.delenv("NO_PROXY", raising=False)
  monkeypatch.delenv("no_proxy", raising=False)
  data = tmp_path / "data"
  with pytest.raises(UserError) as raised:
    generate(problem_name, str(data), tmp_dir=str(tmp_path / "tmp"),
             vocab_size=300, log=lambda _: None)
  said = str(raised.value)
  assert "\n" not in said
  assert said.startswith("could not load TensorFlow Datasets "
                         "'wmt14_translate/"), said
  assert "ModuleNotFoundError" not in said and "ImportError" not in said
  assert said.endswith("without a network, give local files with "
                       "--raw_data_dir"), said
  assert not data.exists()


def test_synthetic_problem_is_generated_and_held_out(tmp_path):
  from problems import synthetic
  train = synthetic.generate("train")
  dev = synthetic.generate("dev")
  assert len(train) == 40000 and len(dev) == 1000
  assert synthetic.generate("dev") == dev               # deterministic
  assert not {s for s, _ in dev} & {s for s, _ in train}
  # Agreement: the verb ending follows the subject's number.
  source, target = "the dogs chase a cat", None
  for s, t in train:
    if s.split()[0] in ("these", "those", "some") or s.split()[1].endswith("s"):
      source, target = s, t
      break
  assert target.split()[-1].endswith("n"), (source, target)


# -- bad input ------------------------------------------------------------------


def write(path, lines, mode="w"):
  with open(path, mode + "b") as f:
    for line in lines:
      f.write(line if isinstance(line, bytes) else line.encode("utf-8"))
      f.write(b"\n")


def local_corpus(tmp_path, source, target, dev=None):
  raw = tmp_path / "raw"
  raw.mkdir()
  write(raw / "train.en", source)
  write(raw / "train.de", target)
  write(raw / "dev.en", dev or source[:3])
  write(raw / "dev.de", dev or target[:3])
  return str(raw)


def test_empty_invalid_and_long_lines_are_counted(tmp_path):
  source = ["a house", "", "a tree", b"bad \xff byte", "x" * 10000] + [
      f"line {i}" for i in range(50)]
  target = ["ein Haus", "leer", "", "ok", "y " * 5000] + [
      f"Zeile {i}" for i in range(50)]
  raw = local_corpus(tmp_path, source, target)
  log = []
  data_dir = str(tmp_path / "data")
  generate("translate_local", data_dir, raw_dir=raw, source_lang="en",
           target_lang="de", vocab_size=300, log=log.append)
  train_line = [l for l in log if l.startswith("train:")][0]
  assert "skipped 2 pair(s): empty line (first at train.en line 2)" in \
      train_line
  assert "skipped 1 pair(s): invalid UTF-8 (first at train.en line 4)" in \
      train_line
  problem = registry.problem("translate_local")
  examples = list(problem.examples("train", data_dir))
  assert len(examples) == 52                    # the long pair is kept ...
  hp = HParams(batch_size=4096, max_length=256)
  kept = sum(int(b["inputs"].shape[0]) for b in
             problem.batches("train", data_dir, hp).take(30))
  longest = max(max(b["inputs"].shape[1], b["targets"].shape[1]) for b in
                problem.batches("train", data_dir, hp).take(30))
  assert kept > 0 and longest <= 256           # ... and dropped in training
  dev_longest = max(b["inputs"].shape[1] for b in
                    problem.batches("dev", data_dir, hp))
  assert dev_longest > 0


def test_parallel_files_of_different_lengths(tmp_path):
  raw = local_corpus(tmp_path, ["a", "b", "c"], ["x", "y"])
  with pytest.raises(CorpusError, match=r"train.en has 3 lines, .*train.de "
                     r"has 2"):
    generate("translate_local", str(tmp_path / "d"), raw_dir=raw,
             source_lang="en", target_lang="de", vocab_size=300,
             log=lambda _: None)


def test_missing_file_and_missing_data(tmp_path):
  raw = local_corpus(tmp_path, ["a b"] * 5, ["x y"] * 5)
  os.remove(os.path.join(raw, "dev.de"))
  with pytest.raises(CorpusError, match="missing dev file.*dev.de"):
    generate("translate_local", str(tmp_path / "d"), raw_dir=raw,
             source_lang="en", target_lang="de", vocab_size=100,
             log=lambda _: None)
  with pytest.raises(CorpusError, match="--raw_data_dir"):
    generate("translate_local", str(tmp_path / "e"), log=lambda _: None)


def test_datagen_cli_errors_are_one_line(tmp_path):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  raw = local_corpus(tmp_path, ["a", "b", "c"], ["x", "y"])
  result = subprocess.run(
      python("-m", "t2t_keras.bin.t2t_datagen", "--problem=translate_local",
             f"--data_dir={tmp_path / 'd'}", f"--raw_data_dir={raw}",
             "--source_lang=en", "--target_lang=de"),
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert result.returncode == 2
  assert "error: parallel files differ in length" in result.stderr
  assert "Traceback" not in result.stderr
  nowhere = subprocess.run(
      python("-m", "t2t_keras.bin.t2t_datagen", "--problem=translate_local",
             f"--data_dir={tmp_path / 'e'}"),
      capture_output=True, text=True, env=env, timeout=300, check=False)
  assert nowhere.returncode == 2 and "--raw_data_dir" in nowhere.stderr


def test_padding_waste_is_small(ende):
  data_dir, _ = ende
  problem = registry.problem("translate_ende")
  hp = HParams(batch_size=2048, max_length=256)
  waste = pipeline.padding_fraction(
      problem.batches("train", data_dir, hp, seed=3), limit=200)
  assert waste < 0.15
  naive = pipeline.padding_fraction(
      problem.examples("train", data_dir).shuffle(10000, seed=3).padded_batch(
          64, padded_shapes={"inputs": [None], "targets": [None]}), limit=200)
  assert naive > waste


def test_a_split_that_fails_part_way_leaves_no_shard(tmp_path):
  """Input that fails after some examples were written (files found
  misaligned when read, a signal): no shard of the split, finished or
  partial, is left for a rerun to take as done."""
  from t2t_keras.data import shards

  def examples():
    yield [5, 6, 1], [7, 1]
    yield [8, 1], [9, 9, 1]
    raise CorpusError("parallel files differ in length")

  final = [str(tmp_path / f"p-train-{i:05d}-of-00002") for i in range(2)]
  with pytest.raises(CorpusError, match="differ in length"):
    shards.write_split(examples(), final, "train", str(tmp_path))
  assert os.listdir(tmp_path) == []
  count, lengths = shards.write_split(iter([([5, 1], [6, 7, 1])]), final,
                                      "train", str(tmp_path))
  assert (count, dict(lengths)) == (1, {3: 1})
  assert sorted(os.listdir(tmp_path)) == [os.path.basename(p) for p in final]


def test_empty_train_files_are_named_and_leave_no_data_dir(tmp_path):
  raw = local_corpus(tmp_path, ["", "  "], ["", ""], dev=["a b", "c d"])
  data = tmp_path / "data"
  with pytest.raises(CorpusError) as raised:
    generate("translate_ende", str(data), raw_dir=raw, vocab_size=300,
             log=lambda _: None)
  assert str(raised.value) == (
      f"{raw}/train.en and {raw}/train.de are empty (no line with text): "
      "the vocabulary and the model learn from the train files; give them "
      "sentences, one a line")
  assert not data.exists()
