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


def test_gpu_check_bounds_its_time_and_keeps_the_figures_it_had(tmp_path):
  """ON_CPU=1 with a limit too short for its training: stopped at LIMIT
  (exit 124, timeout's), with the figures known by then in figures.txt."""
  work = tmp_path / "work"
  env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
             os.environ.get("PATH", ""), ON_CPU="1", LIMIT="6",
             SET="transformer_tiny", STEPS="100000", BATCH="512")
  done = subprocess.run(["bash", "benchmarks/gpu_check.sh", str(work)],
                        cwd=REPO, env=env, capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.returncode == 124, done.stderr[-2000:]
  figures = (work / "figures.txt").read_text(encoding="utf-8").splitlines()
  assert figures[0] == "devices: 1 CPU (ON_CPU=1: a check of this script)"


def test_published_peaks_of_known_gpus():
  sys.path.insert(0, os.path.join(REPO, "benchmarks"))
  import gpu_check
  assert gpu_check.published_peak(
      "8 GPU(s): NVIDIA H200 (compute capability 9.0)") == ("H200", 989.0)
  assert gpu_check.published_peak("1 GPU(s): NVIDIA A100-SXM4-80GB") == (
      "A100", 312.0)
  assert gpu_check.published_peak("1 GPU(s): Tesla T4") is None
  # The PCIe card's own peak, not the SXM module's.
  assert gpu_check.published_peak(
      "2 GPU(s): NVIDIA H100 PCIe (compute capability 9.0)") == (
          "H100 PCIe", 756.0)
  assert gpu_check.published_peak(
      "8 GPU(s): NVIDIA H100 80GB HBM3 (compute capability 9.0)") == (
          "H100", 989.0)
