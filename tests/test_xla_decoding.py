"""The fixed-shape decoding cache lets a search compile with XLA: the same
ids as the graph search for every registered Transformer variant, under
target prefixes and parsing's tree constraint, through t2t-decoder --xla
and a SavedModel exported with --xla."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from t2t_keras import registry
from t2t_keras.io.cache import cache_folder, keep_xla_programs, xla_folder
from t2t_keras.decoding import run
from t2t_keras.decoding.searches.beam_search import beam_search
from t2t_keras.decoding.searches.constraints import PrefixConstraint
from t2t_keras.decoding.searches.token_by_token import greedy_decode
from t2t_keras.export.run import export_run
from t2t_keras.io.lines import LineReader
from test_constraints import _random_parser
from test_export import DECODE, LINES, expected, load_fresh

VOCAB = 60


def _model(name):
  hparams = registry.lookup("hparams", name + "_tiny")()
  hparams.override_from_dict(dict(hidden_size=32, filter_size=64,
                                  num_hidden_layers=2, num_heads=2))
  model = registry.lookup("model", name)(hparams, VOCAB)
  model.build()
  return model


def _inputs():
  ids = np.random.RandomState(5).randint(2, VOCAB, size=(3, 7))
  ids[:, -1] = 1
  ids[1, 3], ids[1, 4:] = 1, 0     # a shorter sentence, padded
  return tf.constant(ids, tf.int32)


def _both(fn, *args):
  """``fn(*args)`` as a graph and compiled with XLA: numpy results."""
  graph = tf.function(fn, autograph=False)(*args)
  xla = tf.function(fn, autograph=False, jit_compile=True)(*args)
  return ([t.numpy() for t in graph], [t.numpy() for t in xla])


@pytest.mark.parametrize("name", ["transformer", "transformer_relative",
                                  "transformer_rotary"])
def test_xla_search_gives_the_graph_search_ids(name):
  model = _model(name)
  inputs = _inputs()
  prefixes = tf.constant([[5, 6], [7, 0], [0, 0]], tf.int32)
  searches = {
      "beam n-best": lambda x: beam_search(model, x, 3, 0.6, 6, nbest=True),
      "greedy": lambda x: greedy_decode(model, x, 6),
      "beam, prefixes": lambda x: beam_search(
          model, x, 3, 0.6, 6, constraint=PrefixConstraint(prefixes)),
      "greedy, prefixes": lambda x: greedy_decode(
          model, x, 6, constraint=PrefixConstraint(prefixes)),
  }
  for what, search in searches.items():
    (ids, scores), (xla_ids, xla_scores) = _both(search, inputs)
    np.testing.assert_array_equal(ids, xla_ids, err_msg=f"{name}, {what}")
    np.testing.assert_allclose(scores, xla_scores, atol=1e-4)
    assert ids.shape[-1] == 7 + 6          # padded length + extra_length
    if "prefixes" in what:                 # each output begins with its own
      best = ids if ids.ndim == 2 else ids[:, 0]
      assert list(best[0, :2]) == [5, 6] and best[1, 0] == 7, what


def test_xla_decoder_parses_as_the_graph_one(shared_data, tmp_path_factory):
  data, out, sources = _random_parser("inorder", shared_data,
                                      tmp_path_factory)
  outputs = {}
  for xla in (False, True):
    log, target = [], io.BytesIO()
    source = LineReader(io.BytesIO("".join(s + "\n" for s in sources[:12])
                                   .encode("utf-8")), "input")
    run.decode("parsing_wsj", out, data, source, target, xla=xla,
               log=log.append)
    outputs[xla] = target.getvalue().decode("utf-8").splitlines()
    assert ("compiled with XLA" in log[0]) == xla, log
  assert outputs[True] == outputs[False] and len(outputs[True]) == 12


def test_xla_export_serves_the_decoders_strings(trained_run, tmp_path):
  data, out = trained_run
  path = export_run("translate_synthetic", out, data, decode_overrides=DECODE,
                    export_dir=str(tmp_path), version=1, xla=True,
                    log=lambda _: None)            # passes the op check
  assert load_fresh(path, LINES) == expected(trained_run)
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    graph = f.read()
  assert b"_XlaMustCompile" in graph
  plain = export_run("translate_synthetic", out, data,
                     decode_overrides=DECODE, export_dir=str(tmp_path),
                     version=2, log=lambda _: None)
  with open(os.path.join(plain, "saved_model.pb"), "rb") as f:
    assert b"_XlaMustCompile\x12\x02(\x01" not in f.read()


def test_xla_decoder_command_keeps_its_programs(trained_run, tmp_path):
  """t2t-decoder --xla writes the decoder's lines and leaves its compiled
  programs in $T2T_KERAS_CACHE/tf_xla (TensorFlow's persistent XLA cache,
  set before TensorFlow is imported), for the next command to load."""
  data, out = trained_run
  source = tmp_path / "source.en"
  source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
  env = dict(os.environ, T2T_KERAS_CACHE=str(tmp_path / "cache"),
             TF_CPP_MIN_LOG_LEVEL="3")
  env.pop("TF_XLA_FLAGS", None)
  result = subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_decoder",
       "--problem=translate_synthetic", f"--data_dir={data}",
       f"--output_dir={out}", f"--decode_hparams={DECODE}", "--xla",
       f"--decode_from_file={source}"], capture_output=True, env=env,
      timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.decode("utf-8").splitlines() == expected(trained_run)
  kept = os.listdir(tmp_path / "cache" / "tf_xla")    # one TF and CPU
  assert len(kept) == 1 and os.listdir(tmp_path / "cache" / "tf_xla" /
                                       kept[0]), "no program kept"
  # A cache the user names stays theirs.
  named = {"TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/x"}
  keep_xla_programs(named)
  assert named == {"TF_XLA_FLAGS": "--tf_xla_persistent_cache_directory=/x"}
  other = {"TF_XLA_FLAGS": "--tf_xla_auto_jit=2"}
  keep_xla_programs(other)
  assert other["TF_XLA_FLAGS"].split() == [
      "--tf_xla_auto_jit=2", f"--tf_xla_persistent_cache_directory="
      f"{os.path.join(cache_folder(), 'tf_xla', tf.__version__)}-" +
      xla_folder().rsplit("-", 1)[1]]


def test_an_unusable_xla_cache_is_left_out_with_a_line(monkeypatch,
                                                        tmp_path):
  """A cache folder that cannot be made (T2T_KERAS_CACHE under a file, a
  HOME that is a file) is not given to TensorFlow, whose first compile
  would fail on it; the command says so and compiles without it."""
  blocker = tmp_path / "a_file"
  blocker.write_text("", encoding="utf-8")
  monkeypatch.setenv("T2T_KERAS_CACHE", str(blocker / "cache"))
  environ = {}
  said = keep_xla_programs(environ)
  assert environ == {}
  assert said.startswith(f"note: XLA's program cache {blocker}/cache/") and \
      "compiling without it" in said
