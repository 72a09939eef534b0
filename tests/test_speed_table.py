"""benchmarks/speed_table.py at toy sizes: every row it can run is measured,
a peer whose environment is missing is named with the command that makes
it, and the ratio lines come out. (The figures mean nothing at these sizes;
the real run is the benchmark's, never a test's.)"""

import importlib.util
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(importlib.util.find_spec("ctranslate2") is None,
                    reason="ctranslate2 is not installed")
def test_speed_table_runs_at_toy_sizes(tmp_path):
  result = subprocess.run(
      [sys.executable, os.path.join(REPO, "benchmarks", "speed_table.py"),
       "--quick", "--steps=1",
       "--systems=t2t_keras,savedmodel,garden,ctranslate2",
       f"--envs={tmp_path}"],
      capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  rows = {tuple(c.strip() for c in line.split("|")[1:3]): line
          for line in result.stdout.splitlines() if line.startswith("| ")}
  for precision in ("float32", "bfloat16", "xla"):
    cells = [c.strip() for c in rows[("t2t_keras", precision)].split("|")]
    assert float(cells[3].replace(",", "")) > 0      # training tokens/s
  for key in (("t2t_keras", "float32"), ("t2t_keras SavedModel", "float32"),
              ("CTranslate2", "int8")):
    beam, greedy = [float(c) for c in rows[key].split("|")[-3:-1]]
    assert beam > 0 and greedy > 0
  assert "bash benchmarks/make_peer_envs.sh" in rows[
      ("TF Model Garden", "float32")]
  assert ("PyTorch nn.Transformer", "float32") not in rows
  assert "beam-4 float32: t2t_keras / CTranslate2 = " in result.stdout
  assert "t2t_keras SavedModel / CTranslate2 = " in result.stdout
