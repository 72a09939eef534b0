"""t2t-exporter --format=ctranslate2 and t2t-decoder --ct2_model_dir: the
export decodes to t2t-decoder's strings, int8 runs, and what CTranslate2
cannot express is refused in one line."""

import os
import subprocess

import pytest

from commands import python
import t2t_keras
from t2t_keras import registry
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.training.dev_bleu import split_text
from t2t_keras.errors import UserError
from t2t_keras.export import ctranslate2 as ct2_export
from t2t_keras.export.run import export_run
from t2t_keras.models.builder import load_model_from_dir

pytest.importorskip("ctranslate2")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDGE_LINES = ["", "ünïcödé ☃ 中文 ä", "the dog sees a cat " * 40]


@pytest.fixture(scope="module")
def lines(trained_run):
  """200 sentences of the problem's dev data and a few odd lines."""
  data, _ = trained_run
  _, sources, _ = split_text(registry.problem("translate_synthetic"), data,
                             "dev", max_lines=200 - len(EDGE_LINES))
  return sources + EDGE_LINES


@pytest.fixture(scope="module")
def exported(trained_run, tmp_path_factory):
  data, out = trained_run
  target = str(tmp_path_factory.mktemp("ct2") / "model")
  export_run("translate_synthetic", out, data, export_dir=target,
             export_format="ctranslate2", log=lambda _: None)
  return target


def decode_cli(trained_run, exported, lines, tmp_path, *flags):
  data, _ = trained_run
  source = tmp_path / "in.txt"
  source.write_text("\n".join(lines) + "\n", encoding="utf-8")
  result = subprocess.run(
      python("-m", "t2t_keras.bin.t2t_decoder",
             "--problem=translate_synthetic", f"--data_dir={data}",
             f"--ct2_model_dir={exported}", f"--decode_from_file={source}",
             *flags),
      capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout.split("\n")[:-1], result.stderr


def test_float32_gives_the_decoders_strings(trained_run, exported, lines,
                                            tmp_path):
  data, out = trained_run
  model, _, _, _ = load_model_from_dir(out)
  vocab = registry.problem("translate_synthetic").vocab(data)
  expected = Decoder(model, vocab, decode_hparams()).decode(lines)
  got, stderr = decode_cli(trained_run, exported, lines, tmp_path)
  assert len(got) == len(lines) == 200
  same = sum(g == e for g, e in zip(got, expected))
  # Near-ties part them on long rambling outputs of this briefly trained
  # model: 199 to 200 of 200 the same on CPUs with AVX-512, 181 on one
  # without (other float32 summation orders).
  assert same >= 0.9 * len(lines), (same, [
      (e, g) for g, e in zip(got, expected) if g != e][:5])
  assert "(float32): beam 4, alpha 0.6" in stderr


def test_int8_runs(trained_run, exported, lines, tmp_path):
  got, stderr = decode_cli(trained_run, exported, lines[:50], tmp_path,
                           "--ct2_compute_type=int8",
                           "--decode_hparams=beam_size=2")
  assert len(got) == 50 and sum(bool(g) for g in got) > 40
  assert "(int8): beam 2" in stderr


def test_export_files(exported):
  names = set(os.listdir(exported))
  assert {"model.bin", "config.json", "source.spm.model", "target.spm.model",
          "t2t_keras.json"} <= names


@pytest.mark.parametrize("model,hparams_set,overrides,reason", [
    ("transformer_relative", "transformer_relative_tiny", "",
     "not TransformerRelative"),
    ("transformer", "transformer_tiny",
     "attention_key_size=16,attention_value_size=32", "d_k = d_v"),
])
def test_what_ctranslate2_cannot_express_is_refused(model, hparams_set,
                                                    overrides, reason,
                                                    tmp_path):
  built = t2t_keras.build_model(hparams_set, vocab_size=50, model=model,
                                hparams_overrides=overrides)
  with pytest.raises(UserError) as e:
    ct2_export.export_ctranslate2(built, (None, None), decode_hparams(),
                                  str(tmp_path / "m"))
  assert reason in str(e.value) and "\n" not in str(e.value)
  assert not (tmp_path / "m").exists()


def test_decoder_refuses_a_directory_that_is_not_an_export(tmp_path):
  from t2t_keras.decoding.backends.ct2 import Ct2Decoder
  with pytest.raises(UserError, match="not a t2t-exporter"):
    Ct2Decoder(str(tmp_path))


def test_sampling_is_seeded_and_n_best_lists_are_ranked(exported, lines):
  from t2t_keras.decoding.backends.ct2 import Ct2Decoder
  sample = "sampling=topk,top_k=5,seed=3"
  first = Ct2Decoder(exported, sample).decode(lines[:20])
  assert first == Ct2Decoder(exported, sample).decode(lines[:20])
  n_best = Ct2Decoder(exported, "return_beams=true").decode(lines[:20])
  for hypotheses in n_best:
    scores = [score for _, score in hypotheses]
    assert 1 <= len(hypotheses) <= 4 and scores == sorted(scores, reverse=True)
