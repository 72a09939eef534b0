"""The same layers and cached decoding under KERAS_BACKEND=jax (skipped
where jax is not installed)."""

import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="jax is not installed")
def test_forward_and_cached_decoding_on_jax():
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
  result = subprocess.run(
      [sys.executable, os.path.join(HERE, "jax_backend_check.py")],
      capture_output=True, text=True, env=env, timeout=600, check=False)
  assert result.returncode == 0, result.stdout + result.stderr
  assert "jax backend OK" in result.stdout


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="jax is not installed")
def test_training_benchmark_runs_on_jax_without_tensorflow():
  """benchmarks/train_speed_jax.py at a toy shape: a table row whose loss
  falls; the script itself asserts that TensorFlow was never imported."""
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
  script = os.path.join(os.path.dirname(HERE), "benchmarks",
                        "train_speed_jax.py")
  result = subprocess.run(
      [sys.executable, script, "--sets=transformer_tiny", "--batch=4",
       "--source_length=8", "--target_length=8", "--vocab=300", "--steps=4",
       "--policies=float32", "--peak_size=128",
       "--hparams=learning_rate_warmup_steps=100,layer_prepostprocess_dropout=0"],
      capture_output=True, text=True, env=env, timeout=600, check=False)
  assert result.returncode == 0, result.stdout + result.stderr
  row = [l for l in result.stdout.splitlines()
         if l.startswith("| transformer_tiny | float32 |")]
  assert len(row) == 1, result.stdout
  first, last = (float(x) for x in row[0].split("|")[7].split("->"))
  assert last < first, row[0]
