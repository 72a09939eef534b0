"""t2t-exporter: the SavedModel loads without t2t_keras, in the session-based
loader TF Serving uses, and gives t2t-decoder's strings."""

import json
import os
import subprocess
import sys

import pytest

from commands import python
from t2t_keras import registry
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.export.run import export_run
from t2t_keras.models.builder import load_model_from_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = ["the dog sees a cat", "", "these old houses see a tree near a river",
         "a kind teacher helps those children near the big old house",
         "ünïcödé ☃ 中文 ä"]
DECODE = "beam_size=3,alpha=0.6,extra_length=8"

LOAD_WITHOUT_T2T = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece ops, as TF Serving links them
model = tf.saved_model.load(sys.argv[1])
out = model.signatures["serving_default"](
    inputs=tf.constant(json.loads(sys.argv[2]), tf.string))
# (import tensorflow itself imports keras, for tf.keras; t2t_keras never.)
assert not any(m.startswith("t2t_keras") for m in sys.modules)
print(json.dumps([o.decode("utf-8") for o in out["outputs"].numpy()]))
"""

SAVED_MODEL_CLI = r"""
import sys
import tensorflow_text  # the model server links tensorflow-text's ops
from tensorflow.python.tools import saved_model_cli
sys.argv = ["saved_model_cli"] + sys.argv[1:]
saved_model_cli.main()
"""


def env():
  return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


@pytest.fixture(scope="module")
def exported(trained_run, tmp_path_factory):
  data, out = trained_run
  root = tmp_path_factory.mktemp("export")
  first = export_run("translate_synthetic", out, data, decode_overrides=DECODE,
                     export_dir=str(root), version=1, log=lambda _: None)
  second = export_run("translate_synthetic", out, data,
                      decode_overrides=DECODE, export_dir=str(root), version=2,
                      log=lambda _: None)
  return first, second


def expected(trained_run):
  data, out = trained_run
  model, _, _, _ = load_model_from_dir(out)
  vocab = registry.problem("translate_synthetic").vocab(data)
  return Decoder(model, vocab, decode_hparams(DECODE)).decode(LINES)


def load_fresh(path, lines):
  result = subprocess.run([sys.executable, "-c", LOAD_WITHOUT_T2T, path,
                           json.dumps(lines)], capture_output=True, text=True,
                          env=env(), timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


def test_fresh_process_gets_the_decoders_strings(trained_run, exported):
  assert os.path.basename(exported[0]) == "1"        # TF Serving's layout
  assert load_fresh(exported[0], LINES) == expected(trained_run)


def test_a_request_is_decoded_in_chunks_of_batch_size(trained_run,
                                                       tmp_path):
  """batch_size=2 at export: a request of 5 sentences is decoded 2, 2
  and 1 at a time (its memory that of 2), with the outputs of one
  search of all 5."""
  data, out = trained_run
  path = export_run("translate_synthetic", out, data,
                    decode_overrides=DECODE + ",batch_size=2",
                    export_dir=str(tmp_path), version=1, log=lambda _: None)
  assert load_fresh(path, LINES) == expected(trained_run)


def test_a_request_of_no_sentences_gets_no_outputs(exported):
  assert load_fresh(exported[0], []) == []


def test_exporting_twice_gives_identical_outputs(exported):
  assert load_fresh(exported[0], LINES) == load_fresh(exported[1], LINES)


def test_saved_model_cli_show_and_run(exported):
  show = subprocess.run([sys.executable, "-c", SAVED_MODEL_CLI, "show",
                         "--dir", exported[0], "--all"], capture_output=True,
                        text=True, env=env(), timeout=300, check=False)
  assert show.returncode == 0, show.stderr[-2000:]
  text = show.stdout
  block = text[text.index("signature_def['serving_default']"):]
  assert "dtype: DT_STRING" in block and "name: serving_default_inputs:0" in \
      block
  assert "signature_def['decode_ids']" in text
  run = subprocess.run([sys.executable, "-c", SAVED_MODEL_CLI, "run", "--dir",
                        exported[0], "--tag_set", "serve", "--signature_def",
                        "serving_default", "--input_exprs",
                        'inputs=["the dog sees a cat", ""]'],
                       capture_output=True, text=True, env=env(), timeout=300,
                       check=False)
  assert run.returncode == 0, run.stderr[-3000:]
  assert "Result for output key outputs:" in run.stdout
  assert "Result for output key scores:" in run.stdout


def test_every_op_is_in_tf_servings_registry(exported, tmp_path):
  from t2t_keras.export import serving_ops
  registry_ops = serving_ops.serving_ops()
  assert len(registry_ops) > 1500 and "SentencepieceOp" in registry_ops
  assert "EagerPyFunc" not in registry_ops     # no Python in a model server
  ops = serving_ops.graph_ops(exported[0])
  assert any(op.startswith("Sentencepiece") for op in ops)
  assert not {op for op in ops if op.startswith("Xla")}
  assert serving_ops.missing_ops(exported[0]) == []
  # The check can fail: a graph with a Python function in it.
  import tensorflow as tf
  module = tf.Module()
  module.f = tf.function(lambda x: tf.py_function(lambda y: y + 1, [x],
                                                   tf.float32),
                         input_signature=[tf.TensorSpec([], tf.float32)])
  tf.saved_model.save(module, str(tmp_path / "py"))
  assert "EagerPyFunc" in serving_ops.missing_ops(str(tmp_path / "py"))


def transposes(saved_model_dir):
  """The number of Transpose nodes in a SavedModel's functions."""
  from tensorflow.core.protobuf import saved_model_pb2
  proto = saved_model_pb2.SavedModel()
  with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as f:
    proto.ParseFromString(f.read())
  return sum(node.op == "Transpose"
             for function in proto.meta_graphs[0].graph_def.library.function
             for node in function.node_def)


def test_the_pre_softmax_matrix_is_stored_transposed(trained_run, exported,
                                                     tmp_path, monkeypatch):
  """models.prepared: the export holds W^T as a variable, and each
  decoder self-attention's [W^Q W^K W^V]; its searches read them instead of
  transposing W a request and making three products a step, and the
  outputs are those of an export without them (T2T_KERAS_KERNELS=0)."""
  import numpy as np
  import tensorflow as tf
  data, out = trained_run
  model, _, _, _ = load_model_from_dir(out)
  stored = tf.saved_model.load(exported[0]).transposed
  assert len(stored) == 1 + model.config.num_decoder_layers
  np.testing.assert_array_equal(
      stored[0].numpy(), np.transpose(model.softmax_weights.embeddings.numpy()))
  stacks = [np.concatenate([layer.projections()[name].kernel.numpy()
                            for name in ("query", "key", "value")], axis=1)
            for layer in model.attention_layers()["decoder_self"]]
  assert len(stacks) == model.config.num_decoder_layers
  for want, got in zip(stacks, stored[1:]):
    np.testing.assert_array_equal(got.numpy(), want)
  monkeypatch.setenv("T2T_KERAS_KERNELS", "0")
  plain = export_run("translate_synthetic", out, data,
                     decode_overrides=DECODE, export_dir=str(tmp_path),
                     version=1, log=lambda _: None)
  assert not tf.saved_model.load(plain).transposed
  # One transpose less in each of the four signatures' searches.
  assert transposes(exported[0]) == transposes(plain) - 4
  assert load_fresh(plain, LINES) == load_fresh(exported[0], LINES)


RUN_WARMUP = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the SentencePiece ops)
from t2t_keras.export import warmup
model = tf.saved_model.load(sys.argv[1])
ran = []
for signature, inputs in warmup.read(sys.argv[1]):
  out = model.signatures[signature](
      **{name: tf.constant(value) for name, value in inputs.items()})
  batch = len(next(iter(inputs.values())))
  assert all(len(o) == batch for o in out.values()), (signature, out)
  texts = [t.decode("utf-8") for t in out.get("outputs", tf.constant([])).numpy()]
  ran.append([signature, batch, [i.decode("utf-8") for i in
                                 inputs.get("inputs", [])], texts])
print(json.dumps(ran))
"""


def test_the_warmup_requests_run_in_the_saved_model(exported):
  """TF Serving's warm-up file: every signature at one sentence, and
  serving_default at eight, each read back from its TFRecord protos and run
  in a fresh process; its outputs are the ones a user's request gets."""
  result = subprocess.run([sys.executable, "-c", RUN_WARMUP, exported[0]],
                          capture_output=True, text=True, env=env(),
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  ran = json.loads(result.stdout.strip().splitlines()[-1])
  assert [(name, batch) for name, batch, _, _ in ran] == [
      ("serving_default", 1), ("serving_default", 8), ("decode_ids", 1),
      ("prefixed", 1), ("prefixed_partial", 1)]
  sentences = ran[1][2]
  assert len(set(sentences)) == 8 and all(len(s.split()) >= 6
                                          for s in sentences)
  assert ran[1][3] == load_fresh(exported[0], sentences)


def test_decoder_through_the_saved_model(trained_run, exported, tmp_path):
  source = tmp_path / "in.txt"
  source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
  result = subprocess.run(
      python("-m", "t2t_keras.bin.t2t_decoder",
             f"--saved_model_dir={exported[0]}",
             f"--decode_from_file={source}"),
      capture_output=True, text=True, env=env(), cwd=REPO, timeout=300,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split("\n")[:-1] == expected(trained_run)
  assert "normalizer.cc" not in result.stderr     # SentencePiece's C++ note


def test_cli_and_existing_version(trained_run, tmp_path):
  data, out = trained_run
  args = python("-m", "t2t_keras.bin.t2t_exporter",
                "--problem=translate_synthetic", f"--output_dir={out}",
                f"--data_dir={data}", f"--export_dir={tmp_path}",
                "--export_version=7", f"--decode_hparams={DECODE}")
  first = subprocess.run(args, capture_output=True, text=True, env=env(),
                         cwd=REPO, timeout=300, check=False)
  assert first.returncode == 0, first.stderr[-3000:]
  assert os.path.isfile(tmp_path / "7" / "saved_model.pb")
  assert "normalizer.cc" not in first.stdout + first.stderr
  again = subprocess.run(args, capture_output=True, text=True, env=env(),
                         cwd=REPO, timeout=300, check=False)
  assert again.returncode == 2 and "exists" in again.stderr


def test_a_saved_model_with_missing_or_cut_variables_is_one_line(exported,
                                                                 tmp_path):
  import glob
  import shutil
  missing, cut = tmp_path / "missing", tmp_path / "cut"
  for copy in (missing, cut):
    shutil.copytree(exported[0], copy)
  os.remove(missing / "variables" / "variables.index")
  data = glob.glob(str(cut / "variables" / "variables.data-*"))[0]
  with open(data, "r+b") as f:
    f.truncate(os.path.getsize(data) // 3)
  for path, start in (
      (missing, f"error: --saved_model_dir={missing} has no "
       f"{missing / 'variables' / 'variables.index'}: its variables are "
       "missing; export it again"),
      (cut, f"error: --saved_model_dir={cut} does not load (")):
    done = subprocess.run(python("-m", "t2t_keras.bin.t2t_decoder",
                                 f"--saved_model_dir={path}"),
                          input="a line\n", cwd=REPO, capture_output=True,
                          text=True, env=env(), timeout=300, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), done.stderr
    if path == cut:
      assert lines[0].endswith("its files are incomplete or damaged: "
                               "export it again"), lines
