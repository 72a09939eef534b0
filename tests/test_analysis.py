"""t2t-attention's pictures and page, t2t-analyze's counts."""

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import t2t_keras
from t2t_keras import registry
from t2t_keras.analysis import cost
from t2t_keras.analysis.analyze_run import analyze
from t2t_keras.analysis.attention import AttentionReader
from t2t_keras.analysis.pictures import png_name
from t2t_keras.analysis.traced import dot_flops, traced_step_flops
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.models.builder import load_model_from_dir

from commands import t2t_command as command


@pytest.fixture(scope="module")
def pictures(trained_run, tmp_path_factory):
  """(out_dir, run) of t2t-attention on two sentences, one forced."""
  data, run = trained_run
  out = str(tmp_path_factory.mktemp("attention"))
  done = command("t2t_attention", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={run}",
                 "--sentence=the dog sees a cat", f"--out_dir={out}")
  assert done.returncode == 0, done.stderr[-3000:]
  return out, run, data


def test_a_picture_for_every_layer_head_and_kind(pictures):
  out, run, _ = pictures
  model, hparams, _, _ = load_model_from_dir(run)
  names = set(os.listdir(os.path.join(out, "sentence_1")))
  expected = {png_name(kind, layer, head)
              for kind in model.attention_layers()
              for layer in range(hparams.num_hidden_layers)
              for head in range(hparams.num_heads)}
  assert len(expected) == 3 * hparams.num_hidden_layers * 4
  assert names == expected
  for name in names:
    with open(os.path.join(out, "sentence_1", name), "rb") as f:
      assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_rows_sum_to_one_over_unmasked_keys(trained_run):
  data, run = trained_run
  problem = registry.problem("translate_synthetic")
  model, hparams, _, _ = load_model_from_dir(run)
  reader = AttentionReader(model, problem.input_vocab(data),
                           decode_hparams("beam_size=2"))
  for target in (None, "da jeba un vomije"):
    maps = reader.read("the dog sees a cat near the river", target)
    source, target_len = len(maps.source_tokens), len(maps.target_tokens)
    shapes = {"encoder_self": (source, source),
              "decoder_self": (target_len, target_len),
              "encoder_decoder": (target_len, source)}
    for kind, weights in maps.weights.items():
      assert weights.shape == (
          (hparams.num_hidden_layers, 4) + shapes[kind]), kind
      np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    future = np.triu(np.ones((target_len, target_len), bool), k=1)
    assert np.all(maps.weights["decoder_self"][:, :, future] < 1e-6)
    # The weights depend on the sentence: heads are not uniform.
    assert maps.weights["encoder_self"].std() > 0.01
  assert maps.target == "da jeba un vomije"
  assert maps.target_tokens[-1] == "</s>"


def test_page_opens_in_headless_chromium(pictures, tmp_path):
  out, _, _ = pictures
  page = os.path.join(out, "attention.html")
  text = open(page, encoding="utf-8").read()
  assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
  assert "https://" not in text and "<link" not in text and " src=" not in text
  browser = shutil.which("chromium") or shutil.which("chromium-browser")
  if not browser:
    if os.environ.get("T2T_REQUIRE_CHROMIUM"):   # .ci/run sets it
      pytest.fail("chromium is not installed, and T2T_REQUIRE_CHROMIUM is "
                  "set (.ci/run could not install it)")
    pytest.skip("chromium is not installed (apt-get install chromium)")
  done = subprocess.run(
      [browser, "--headless", "--no-sandbox", "--disable-gpu",
       f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
       "--v=0", "--virtual-time-budget=5000", "--dump-dom",
       "file://" + page], capture_output=True, text=True, timeout=120,
      check=False)
  assert done.returncode == 0, done.stderr[-2000:]
  console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
  assert not console, console
  dom = done.stdout
  assert 'data-ready="1"' in dom and "data-error" not in dom
  assert dom.count("<rect") > 10 and dom.count("<line") > 5


def test_command_errors_are_one_line(trained_run, tmp_path):
  data, run = trained_run
  done = command("t2t_attention", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={run}",
                 f"--out_dir={tmp_path}")
  assert done.returncode != 0 and "exactly one of --sentence" in done.stderr
  empty = tmp_path / "empty.txt"
  empty.write_text("", encoding="utf-8")
  done = command("t2t_attention", "--problem=translate_synthetic",
                 f"--data_dir={data}", f"--output_dir={run}",
                 f"--out_dir={tmp_path}", f"--decode_from_file={empty}")
  assert done.returncode == 2
  assert done.stderr.strip().splitlines()[-1].startswith("error: no sentence")


@pytest.mark.parametrize("hparams_set,overrides,model", [
    ("transformer_base", "", "transformer"),
    ("transformer_big", "", "transformer"),
    ("transformer_tiny", "pos=emb,norm_position=pre,shared_embedding=false,"
     "shared_embedding_and_softmax_weights=false", "transformer"),
    ("transformer_table3_b_dk16", "", "transformer"),
    ("transformer_relative_tiny", "", "transformer_relative"),
    ("transformer_rotary_tiny", "", "transformer_rotary"),
])
def test_parameter_counts_equal_the_built_model(hparams_set, overrides,
                                                model):
  shared = "shared_embedding=false" not in overrides
  vocab, target_vocab = (37000, 37000) if shared else (3000, 2000)
  report = analyze(hparams_set, vocab, overrides, model=model,
                   target_vocab_size=target_vocab)
  net = t2t_keras.build_model(hparams_set, hparams_overrides=overrides,
                              model=model, input_vocab_size=vocab,
                              target_vocab_size=target_vocab)
  assert report["parameters"]["total"] == net.count_params()


# transformer_big is base's formula at other sizes (its parameter count is
# checked above); tracing its step under XLA took 11 s of the suite.
@pytest.mark.parametrize("hparams_set,model", [
    ("transformer_base", "transformer"),
    ("transformer_relative_tiny", "transformer_relative"),
    ("transformer_rotary_tiny", "transformer_rotary")])
def test_flops_agree_with_a_traced_training_step(hparams_set, model):
  sentences, source, target = 2, 13, 11
  net = t2t_keras.build_model(hparams_set, vocab_size=37000, model=model)
  measured = traced_step_flops(net, sentences, source, target)
  counted = cost.step_flops(net.config, (37000, 37000), source, target,
                            sentences)
  assert abs(counted - measured) / measured < 0.05, (counted, measured)


def test_dot_flops_reads_hlo():
  hlo = ("  %dot.3 = f32[2,5,7]{2,1,0} dot(f32[2,5,3]{2,1,0} %a, "
         "f32[3,7]{1,0} %b), lhs_contracting_dims={2}, "
         "rhs_contracting_dims={0}\n  %add = f32[2]{0} add(f32[2] %x, f32[2] %y)")
  assert dot_flops(hlo) == 2 * 2 * 5 * 7 * 3


def test_analyze_command_tables_and_json():
  done = command("t2t_analyze", "--hparams_set=transformer_base",
                 "--vocab_size=37000")
  assert done.returncode == 0, done.stderr
  assert "encoder layer 6" in done.stdout and "decoder layer 6" in done.stdout
  assert re.search(r"the paper's figure .* 3\.300e\+18", done.stdout)
  assert "Self-Attention (restricted)" in done.stdout
  done = command("t2t_analyze", "--hparams_set=transformer_big",
                 "--vocab_size=37000", "--json")
  report = json.loads(done.stdout)
  assert report["training_run"]["steps"] == 300000
  assert report["table1"][1]["sequential"] == 25
  bad = command("t2t_analyze", "--hparams_set=transformer_bas",
                "--vocab_size=37000")
  assert bad.returncode == 2 and "transformer_base" in bad.stderr


def test_analyze_refuses_a_model_it_cannot_count():
  from t2t_keras import registry
  from t2t_keras.errors import UserError
  from t2t_keras.models.transformer import Transformer

  class Uncounted(Transformer):
    pass

  registry.register_model("uncounted_for_test")(Uncounted)
  try:
    with pytest.raises(UserError,
                       match="cannot count model uncounted_for_test"):
      analyze("transformer_tiny", 100, model="uncounted_for_test")
  finally:
    registry._REGISTRIES["model"].pop("uncounted_for_test")
