"""benchmarks/gpu_check.sh where TensorFlow sees no GPU: one line, exit 2,
nothing written (on a machine with a GPU it measures instead, and this
test leaves it to be run by hand)."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from commands import REPO


def test_gpu_check_refuses_without_a_gpu(tmp_path):
  if tf.config.list_physical_devices("GPU"):
    pytest.skip("a GPU is visible: run bash benchmarks/gpu_check.sh")
  work = tmp_path / "work"
  env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
             os.environ.get("PATH", ""))
  env.pop("TF_CPP_MIN_LOG_LEVEL", None)
  done = subprocess.run(["bash", "benchmarks/gpu_check.sh", str(work)],
                        cwd=REPO, env=env, capture_output=True, text=True,
                        timeout=300, check=False)
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stdout == ""
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1, done.stderr
  assert lines[0].startswith("gpu_check: TensorFlow sees no GPU (this "
                             "TensorFlow is "), lines[0]
  assert lines[0].endswith("): nothing to measure"), lines[0]
  assert not work.exists()
