"""t2t-decoder under KERAS_BACKEND=jax: a trained run's checkpoint read
into the model built on JAX by its object graph's attribute paths
(checkpoint_paths), decoded by jax.jit searches (decoding.backends.jax_decoder),
gives the TensorFlow decoder's lines: beam search under whole-word target
prefixes, greedy search, empty and non-ASCII lines; and what it refuses."""

import io
import os
import subprocess
import sys

import numpy as np
import pytest

from t2t_keras.io import checkpoint_io
from t2t_keras.io import checkpoint_paths
from t2t_keras import registry
from t2t_keras.bin import common
from t2t_keras.decoding import run
from t2t_keras.decoding.batching import pad_rows
from t2t_keras.decoding.backends.jax_decoder import padded_rows, padded_width
from t2t_keras.errors import UserError
from t2t_keras.models.builder import build_model_from_dir, load_model_from_dir
from test_constraints import _reader, _synthetic_lines
from test_export import LINES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tensorflow_lines(trained_run, sources, overrides, prefixes=None):
  data, out = trained_run
  target = io.BytesIO()
  run.decode("translate_synthetic", out, data, _reader(sources), target,
             decode_overrides=overrides, log=lambda _: None,
             prefixes=None if prefixes is None else _reader(prefixes))
  return target.getvalue().decode("utf-8").splitlines()


def _jax_decoder(trained_run, folder, sources, overrides, prefixes=None):
  """t2t-decoder under KERAS_BACKEND=jax, a fresh process: (output lines,
  standard error)."""
  data, out = trained_run
  (folder / "in.txt").write_text("".join(s + "\n" for s in sources),
                                 encoding="utf-8")
  args = [f"--decode_from_file={folder / 'in.txt'}",
          f"--decode_to_file={folder / 'out.txt'}"]
  if prefixes is not None:
    (folder / "prefixes.txt").write_text(
        "".join(p + "\n" for p in prefixes), encoding="utf-8")
    args.append(f"--decode_prefix_file={folder / 'prefixes.txt'}")
  # XLA's LLVM backend unoptimized: the same programs, compiled sooner.
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
             TF_CPP_MIN_LOG_LEVEL="3",
             XLA_FLAGS="--xla_backend_optimization_level=0",
             JAX_COMPILATION_CACHE_DIR=str(folder.parent / "jax_cache"))
  done = subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_decoder",
       "--problem=translate_synthetic", f"--output_dir={out}",
       f"--data_dir={data}", f"--decode_hparams={overrides}", *args],
      capture_output=True, text=True, cwd=REPO, env=env, timeout=600,
      check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return ((folder / "out.txt").read_text(encoding="utf-8").splitlines(),
          done.stderr)


def test_jax_decoder_gives_the_tensorflow_decoders_lines(trained_run,
                                                        tmp_path):
  data, _ = trained_run
  problem = registry.problem("translate_synthetic")
  sources = [l.split("\t")[0] for l in _synthetic_lines(problem, data, 40)]
  sources += LINES                # an empty line, non-ASCII text
  free = _tensorflow_lines(trained_run, sources, "beam_size=1")
  # Prefixes: every third line none, else a free output's first word.
  prefixes = [free[(i + 1) % 40].split()[0] if i % 3 and i < 40 else ""
              for i in range(len(sources))]
  beam = _tensorflow_lines(trained_run, sources, "beam_size=3", prefixes)
  assert beam != free and len(beam) == len(sources)   # the check can fail
  for name, overrides, given, want in (
      ("greedy", "beam_size=1", None, free),
      ("beam", "beam_size=3", prefixes, beam)):
    (tmp_path / name).mkdir()
    lines, log = _jax_decoder(trained_run, tmp_path / name, sources,
                              overrides, given)
    assert "on JAX (jax.jit)" in log, log
    assert lines == want, name


def test_checkpoint_paths_read_every_weight_as_tensorflow_restores_it(
    trained_run, tmp_path):
  """checkpoint_paths.restore under TensorFlow too: a fresh model gets the
  checkpoint's values by attribute paths; a model with another shape is
  one line; a damaged checkpoint is UnreadableCheckpoint."""
  _, out = trained_run
  restored, _, _, path = load_model_from_dir(out)
  fresh, _, _ = build_model_from_dir(out)
  assert not all(np.array_equal(a, b) for a, b in
                 zip(fresh.get_weights(), restored.get_weights()))
  assert checkpoint_paths.restore(fresh, path) == []
  for a, b in zip(fresh.get_weights(), restored.get_weights()):
    np.testing.assert_array_equal(a, b)
  wider = registry.model("transformer")(
      registry.hparams("transformer_tiny").parse(
          "hidden_size=32,filter_size=64,num_hidden_layers=1"),
      fresh.input_vocab_size, fresh.target_vocab_size)
  wider.build()
  with pytest.raises(UserError, match="another model's checkpoint"):
    checkpoint_paths.restore(wider, path)
  damaged = tmp_path / "ckpt-1"
  for name in checkpoint_io.files_of(path):
    data = open(name, "rb").read()
    suffix = name[len(path):]
    (tmp_path / ("ckpt-1" + suffix)).write_bytes(
        data[:len(data) // 2] if suffix.startswith(".data") else data)
  with pytest.raises(checkpoint_io.UnreadableCheckpoint, match="ckpt-1"):
    checkpoint_paths.restore(fresh, str(damaged))


def test_jax_batches_pad_to_few_shapes():
  assert [padded_width(n, 512) for n in (1, 8, 9, 13, 17, 25, 33, 500)] == [
      8, 8, 12, 16, 24, 32, 48, 512]
  assert padded_width(40, 40) == 40 and padded_width(30, 20) == 30
  assert [padded_rows(n, 32) for n in (1, 3, 5, 17, 32)] == [1, 4, 8, 32, 32]
  assert padded_rows(40, 32) == 40
  batch = pad_rows([[5, 1], [7, 8, 1]], 4, 8)
  assert batch.shape == (4, 8) and batch.dtype == np.int32
  assert batch[1].tolist() == [7, 8, 1, 0, 0, 0, 0, 0]
  assert batch[3].tolist() == batch[0].tolist() == [5, 1, 0, 0, 0, 0, 0, 0]


def test_what_the_jax_backend_refuses(trained_run, monkeypatch):
  with pytest.raises(UserError, match="KERAS_BACKEND=torch"):
    common.check_backend({"KERAS_BACKEND": "torch"}, ("tensorflow", "jax"))
  common.check_backend({"KERAS_BACKEND": "jax"}, ("tensorflow", "jax"))
  with pytest.raises(UserError, match="t2t-decoder on jax too"):
    common.check_backend({"KERAS_BACKEND": "jax"})
  data, out = trained_run
  monkeypatch.setattr(run.keras.backend, "backend", lambda: "jax")
  for options, drop in ((dict(xla=True), "--xla"),
                        (dict(alignments=io.BytesIO()), "--alignment_file")):
    with pytest.raises(UserError, match=f"drop {drop}$"):
      run.decode("translate_synthetic", out, data, _reader(["a"]),
                 io.BytesIO(), log=lambda _: None, **options)
  with pytest.raises(UserError, match="runs on TensorFlow"):
    run.score("translate_synthetic", out, data, [("a", "b")], io.BytesIO())
