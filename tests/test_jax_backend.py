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
