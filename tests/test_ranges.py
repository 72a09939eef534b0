"""Settings that make no sense are one line and exit 2 before TensorFlow is
imported: each command runs with a ``tensorflow`` on its path that fails to
import, so a check made after the import would show that failure instead."""

import os
import subprocess
import sys

import pytest

from t2t_keras import hparam_ranges
from t2t_keras.errors import UserError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _without_tensorflow(tmp_path, name, *args):
  fake = tmp_path / "no_tf" / "tensorflow"
  fake.mkdir(parents=True, exist_ok=True)
  (fake / "__init__.py").write_text(
      "raise ImportError('TensorFlow was imported')\n", encoding="utf-8")
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [str(fake.parent), REPO]))
  return subprocess.run(
      [sys.executable, "-m", f"t2t_keras.bin.{name}", *args],
      capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
      check=False)


@pytest.mark.parametrize("setting, said", [
    ("beam_size=0", "beam_size=0 is out of range: expected beam_size >= 1"),
    ("beam_size=-2", "beam_size=-2 is out of range: expected beam_size >= 1"),
    ("alpha=-1", "alpha=-1 is out of range: expected alpha >= 0"),
    ("extra_length=-5",
     "extra_length=-5 is out of range: expected extra_length >= 0"),
    ("top_p=1.5", "top_p=1.5 is out of range: expected top_p in (0, 1]"),
    ("beam_size=100000", "beam_size=100000 is out of range: expected "
     "beam_size in [1, VOCAB], the target vocabulary of RUN"),
])
def test_decode_hparams_out_of_range(trained_run, tmp_path, setting, said):
  data, out = trained_run
  done = _without_tensorflow(
      tmp_path, "t2t_decoder", "--problem=translate_synthetic",
      f"--data_dir={data}", f"--output_dir={out}",
      f"--decode_hparams={setting}")
  import json
  with open(os.path.join(out, "model.json"), encoding="utf-8") as f:
    vocab = json.load(f)["target_vocab_size"]
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines() == [
      "error: --decode_hparams: " + said.replace("VOCAB", str(vocab))
      .replace("RUN", str(out))]


@pytest.mark.parametrize("setting, said", [
    ("batch_size=-1", "batch_size=-1 is out of range: expected batch_size "
     ">= 1"),
    ("batch_size=4", "batch_size=4 is out of range: the shortest training "
     "example in DATA has SHORTEST tokens, so expected batch_size >= "
     "SHORTEST (batch_size counts tokens a batch)"),
    ("layer_prepostprocess_dropout=1.0", "layer_prepostprocess_dropout=1.0 "
     "is out of range: expected layer_prepostprocess_dropout in [0, 1)"),
    ("gradient_accumulation_steps=0", "gradient_accumulation_steps=0 is out "
     "of range: expected gradient_accumulation_steps >= 1"),
])
def test_trainer_hparams_out_of_range(trained_run, tmp_path, setting, said):
  data, _ = trained_run
  out = tmp_path / "run"
  shortest = hparam_ranges.shortest_training_example(
      data, "translate_synthetic")
  assert shortest and shortest > 4
  done = _without_tensorflow(
      tmp_path, "t2t_trainer", "--problem=translate_synthetic",
      "--hparams_set=transformer_tiny", f"--hparams={setting}",
      f"--data_dir={data}", f"--output_dir={out}")
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines() == [
      "error: --hparams: " + said.replace("DATA", str(data)).replace(
          "SHORTEST", str(shortest))]
  assert not out.exists()


def test_the_library_checks_what_it_builds():
  from t2t_keras.decoding.options import decode_hparams
  with pytest.raises(UserError, match=r"decode hparams: beam_size=0 is out "):
    decode_hparams("beam_size=0")
  assert decode_hparams("beam_size=1,alpha=0").beam_size == 1
  with pytest.raises(UserError, match=r"temperature=0 is out of range"):
    hparam_ranges.check({"temperature": 0}, hparam_ranges.DECODE, "x")
  hparam_ranges.check({"top_p": 1.0, "seed": -3}, hparam_ranges.DECODE, "x")
