"""t2t-decoder: one output line per input line, order, files and pipes."""

import os
import subprocess

import pytest

from commands import python
from t2t_keras import registry
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.models.builder import load_model_from_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = ["the dog sees a cat", "", "these old houses see a tree near a river",
         "x" * 10000, "a kind teacher helps those children",
         "ünïcödé ☃ 中文"]


@pytest.fixture
def run_dir(trained_run):
  return trained_run


def decoder(run_dir, overrides=""):
  data, out = run_dir
  model, _, _, _ = load_model_from_dir(out)
  vocab = registry.problem("translate_synthetic").vocab(data)
  hparams = decode_hparams("extra_length=8,max_input_length=64," + overrides)
  return Decoder(model, vocab, hparams)


@pytest.mark.parametrize("overrides", ["beam_size=4", "beam_size=1"])
def test_every_line_gives_one_line_in_order(run_dir, overrides):
  d = decoder(run_dir, overrides + ",batch_size=2")
  outputs = d.decode(LINES)
  assert len(outputs) == len(LINES)
  assert all(isinstance(o, str) and "\n" not in o for o in outputs)
  assert d.stats.truncated == 1                  # the 10,000-character line
  single = decoder(run_dir, overrides)
  alone = [single.decode([line])[0] for line in LINES]
  assert outputs == alone                        # batching and sorting undone
  assert len(set(alone)) >= 4                    # which needs distinct outputs


def test_n_best_lists(run_dir):
  outputs = decoder(run_dir, "beam_size=3,return_beams=true").decode(LINES[:2])
  assert all(len(o) == 3 for o in outputs)
  scores = [s for _, s in outputs[0]]
  assert scores == sorted(scores, reverse=True)


def test_cli_files_and_pipes(run_dir, tmp_path):
  data, out = run_dir
  source = tmp_path / "in.txt"
  source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
  target = tmp_path / "out.txt"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  common = python(
      "-m", "t2t_keras.bin.t2t_decoder", "--problem=translate_synthetic",
      f"--output_dir={out}", f"--data_dir={data}",
      "--decode_hparams=beam_size=2,extra_length=8,max_input_length=64")
  result = subprocess.run(common + [f"--decode_from_file={source}",
                                    f"--decode_to_file={target}"],
                          capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert len(target.read_text(encoding="utf-8").split("\n")) == len(LINES) + 1
  assert "sentences/s" in result.stderr
  piped = subprocess.run(common, input="\n".join(LINES) + "\n",
                         capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=300, check=False)
  assert piped.returncode == 0, piped.stderr[-3000:]
  assert piped.stdout == target.read_text(encoding="utf-8")


def test_decode_split_writes_outputs_sources_and_references(run_dir,
                                                            tmp_path):
  from tests.commands import t2t_command
  from problems import synthetic
  data, out = run_dir
  target = tmp_path / "test.decoded"
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--output_dir={out}", f"--data_dir={data}",
                     "--decode_split=test", f"--decode_to_file={target}",
                     "--decode_hparams=beam_size=1,extra_length=8")
  assert done.returncode == 0, done.stderr[-3000:]
  outputs, inputs, targets = (
      (tmp_path / f"test.decoded{s}").read_text(encoding="utf-8")
      .splitlines() for s in ("", ".inputs", ".targets"))
  assert len(outputs) == len(inputs) == len(targets) == 1000
  # The sources and references are the generated test split's text.
  pairs = synthetic.generate("test")
  assert sorted(zip(inputs, targets)) == sorted(pairs)
  refused = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                        f"--output_dir={out}", f"--data_dir={data}",
                        "--decode_split=test")
  assert refused.returncode != 0
  assert "--decode_split needs --decode_to_file" in refused.stderr


def test_decodes_in_the_precision_the_run_trained_in(run_dir, tmp_path):
  import io
  import json
  import shutil
  import keras
  from tests.commands import t2t_command
  from t2t_keras.errors import UserError
  from t2t_keras.decoding import run as decoding_run
  from t2t_keras.export.run import export_run
  from t2t_keras.io.lines import LineReader
  data, out = run_dir
  # The same float32 weights, as if trained with mixed bfloat16.
  mixed = str(tmp_path / "mixed")
  shutil.copytree(out, mixed)
  hparams_path = os.path.join(mixed, "hparams.json")
  with open(hparams_path, encoding="utf-8") as f:
    values = json.load(f)
  values["activation_dtype"] = "bfloat16"
  with open(hparams_path, "w", encoding="utf-8") as f:
    json.dump(values, f)
  model = load_model_from_dir(mixed)[0]
  assert model.compute_dtype == "bfloat16"
  assert {w.dtype for w in model.weights} == {"float32"}
  assert keras.config.dtype_policy().name == "float32"     # restored
  as_float32 = load_model_from_dir(mixed, activation_dtype="float32")[0]
  assert as_float32.compute_dtype == "float32"
  vocab = registry.problem("translate_synthetic").vocab(data)
  hparams = decode_hparams("beam_size=2,extra_length=8,max_input_length=64")
  plain = Decoder(load_model_from_dir(out)[0], vocab, hparams).decode(LINES)
  assert Decoder(as_float32, vocab, hparams).decode(LINES) == plain
  assert len(Decoder(model, vocab, hparams).decode(LINES)) == len(LINES)
  # The library's default (as trained), then the command's override.
  logged, stream = [], io.BytesIO()
  written = decoding_run.decode(
      "translate_synthetic", mixed, data,
      LineReader(io.BytesIO("\n".join(LINES).encode() + b"\n"), "lines"),
      stream, decode_overrides="beam_size=1,extra_length=8,"
      "max_input_length=64", log=logged.append)
  assert written == len(LINES) == stream.getvalue().count(b"\n")
  assert any("in bfloat16 (float32 weights):" in m for m in logged), logged
  source = tmp_path / "in.txt"
  source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
  target = tmp_path / "out.txt"
  done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                     f"--output_dir={mixed}", f"--data_dir={data}",
                     f"--decode_from_file={source}",
                     f"--decode_to_file={target}", "--activation_dtype=float32",
                     "--decode_hparams=beam_size=1,extra_length=8,"
                     "max_input_length=64")
  assert done.returncode == 0, done.stderr[-3000:]
  assert "in float32:" in done.stderr
  assert len(target.read_text(encoding="utf-8").split("\n")) == len(LINES) + 1
  with pytest.raises(UserError, match="CTranslate2 model picks"):
    export_run("translate_synthetic", mixed, data, export_format="ctranslate2",
               activation_dtype="float32", log=lambda _: None)
