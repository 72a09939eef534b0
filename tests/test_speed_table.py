"""benchmarks/speed_table.py at toy sizes: every row it can run is measured,
a peer whose environment is missing is named with the command that makes
it, and the ratio lines come out. (The figures mean nothing at these sizes;
the real run is the benchmark's, never a test's.)"""

import importlib.util
import os
import subprocess

import pytest

from commands import python

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(importlib.util.find_spec("ctranslate2") is None,
                    reason="ctranslate2 is not installed")
def test_speed_table_runs_at_toy_sizes(tmp_path):
  # The float32 rows: every system's, and the ratio lines. (The other
  # precisions differ by the worker's policy or jit flag only, and cost a
  # process each.)
  result = subprocess.run(
      python(os.path.join(REPO, "benchmarks", "speed_table.py"), "--quick",
             "--steps=1", "--precisions=float32",
             "--systems=t2t_keras,savedmodel,garden,ctranslate2",
             f"--envs={tmp_path}"),
      capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  rows = {tuple(c.strip() for c in line.split("|")[1:3]): line
          for line in result.stdout.splitlines() if line.startswith("| ")}
  cells = [c.strip() for c in rows[("t2t_keras", "float32")].split("|")]
  assert float(cells[3].replace(",", "")) > 0      # training tokens/s
  for key in (("t2t_keras", "float32"), ("t2t_keras SavedModel", "float32"),
              ("CTranslate2", "float32")):
    beam, greedy = [float(c) for c in rows[key].split("|")[-3:-1]]
    assert beam > 0 and greedy > 0
  assert "bash benchmarks/make_peer_envs.sh" in rows[
      ("TF Model Garden", "float32")]
  assert ("PyTorch nn.Transformer", "float32") not in rows
  assert not [key for key in rows if key[1] in ("bfloat16", "xla", "int8")]
  assert "beam-4 float32: t2t_keras / CTranslate2 = " in result.stdout
  assert "t2t_keras SavedModel / CTranslate2 = " in result.stdout


def _speed_table():
  spec = importlib.util.spec_from_file_location(
      "speed_table", os.path.join(REPO, "benchmarks", "speed_table.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_rounds_give_median_cells_and_median_paired_ratios():
  table = _speed_table()
  ours = [{"tokens_per_s": v, "peak_rss_gb": g}
          for v, g in ((1200.0, 4.1), (1000.0, 4.2), (1100.0, 4.3))]
  theirs = [{"tokens_per_s": v} for v in (1000.0, 800.0, 1000.0)]
  # The cell is the round of median speed, with that round's memory.
  assert table.median_result(ours) == {"tokens_per_s": 1100.0,
                                       "peak_rss_gb": 4.3}
  assert table.median_result(ours[:2])["tokens_per_s"] == 1000.0
  # Ratios pair rounds (1.20, 1.25, 1.10), not medians (1100 / 1000).
  assert table.ratio_text(ours, theirs) == (
      "1.20x (median of 3 rounds: 1.10x, 1.20x, 1.25x)")
  assert table.ratio_text(ours[:1], theirs[:1]) == "1.20x"
  failed = {"error": "out of memory"}
  assert table.median_result(ours + [failed]) == failed
  assert table.ratio_text(ours, theirs[:2] + [failed]) is None
  decoding = [{"sentences_per_s": 20.0}, {"sentences_per_s": 24.0}]
  assert table.ratio_text(decoding, decoding[::-1]) == (
      "1.02x (median of 2 rounds: 0.83x, 1.20x)")
