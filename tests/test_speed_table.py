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
             "--parts=throughput", f"--envs={tmp_path}"),
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


def latency_rows(tmp_path, precisions, systems):
  """The toy latency table's lines (header first) for ``precisions`` and
  ``systems`` (--precisions and --systems), each cell checked to be
  seconds."""
  result = subprocess.run(
      python(os.path.join(REPO, "benchmarks", "speed_table.py"), "--quick",
             "--parts=latency", "--latency_steps=1",
             f"--precisions={precisions}", f"--systems={systems}",
             f"--envs={tmp_path}"),
      capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  lines = result.stdout[result.stdout.index("Latency, toy model"):]
  rows = [line for line in lines.splitlines() if line.startswith("| ")]
  assert [r.split("|")[1].strip() for r in rows[2:]] == [
      "1 sentence, greedy, 9 tokens", "2 sentences, beam 4, 9 tokens"]
  for row in rows[2:]:
    assert all(float(c.strip().split()[0]) > 0 and c.strip().endswith(" s")
               for c in row.split("|")[2:-1])
  return rows


def test_latency_rows_at_toy_sizes(tmp_path):
  """The latency part's XLA modes (the others are the throughput test's
  workers at another shape): a cell a request shape, in seconds."""
  rows = latency_rows(tmp_path, "xla", "t2t_keras,savedmodel")
  assert rows[0] == "| request | ours XLA | ours SavedModel XLA |"


def test_latency_jax_column_at_toy_sizes(tmp_path):
  """The JAX column: speed/jax_worker.py's searches under jax.jit."""
  assert latency_rows(tmp_path, "float32", "jax")[0] == (
      "| request | ours JAX |")


def test_latency_verdicts_name_our_fastest_mode():
  import sys
  sys.path.insert(0, os.path.join(REPO, "benchmarks", "speed"))
  import latency
  shape = latency.SHAPES[0]
  seconds = {(shape, "t2t_keras", "float32"): 0.5,
             (shape, "t2t_keras", "xla"): 0.2,
             (shape, "savedmodel", "float32"): None,
             (shape, "ctranslate2", "float32"): 0.25}
  columns = [c for c in latency.COLUMNS
             if (shape, c[0], c[1]) in seconds]
  lines = latency.table(seconds, columns, quick=False)
  assert lines[0] == ("| request | ours graph | ours XLA | ours SavedModel "
                      "| CTranslate2 float32 |")
  assert lines[2] == ("| 1 sentence, greedy, 30 tokens | 0.5 s | 0.2 s | "
                      "failed | 0.25 s |")
  assert ("1 sentence, greedy, 30 tokens: fastest of ours (ours XLA) 0.2 s "
          "= 0.80x CTranslate2 float32's time") in lines


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


def test_step_floor_prints_its_table():
  """benchmarks/step_floor.py at toy sizes: a row for 1 and 4 rows, a cell
  a runtime (numpy, TensorFlow graph in float32 and bfloat16 and XLA, JAX
  in Keras's and the transposed layout and packed for rows_product)."""
  result = subprocess.run(
      python(os.path.join(REPO, "benchmarks", "step_floor.py"), "--quick"),
      capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  rows = [line for line in result.stdout.splitlines()
          if line.startswith("| ")]
  assert rows[0] == ("| rows | numpy | TensorFlow graph "
                     "| TensorFlow graph bfloat16 | TensorFlow XLA "
                     "| JAX [d_in, d_out] | JAX [d_out, d_in] "
                     "| JAX packed (rows_product) |")
  assert [r.split("|")[1].strip() for r in rows[2:]] == ["1", "4"]
  for row in rows[2:]:
    assert all(c.strip().endswith("GB/s)") for c in row.split("|")[2:-1])
