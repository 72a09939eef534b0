"""The measured matmul peak and the budgets scaled by it (the recipes'
first lines)."""

import pytest

from t2t_keras.analysis import peak
from t2t_keras.errors import UserError


def test_a_budget_scales_inversely_with_the_peak():
  assert peak.scaled_budget(60, 433, 433) == 60
  assert peak.scaled_budget(60, 433, 216.5) == 120
  assert peak.scaled_budget(30, 433, 866) == 15
  with pytest.raises(UserError, match="positive"):
    peak.scaled_budget(60, 433, 0)


def test_the_report_ends_each_line_with_its_figure(monkeypatch):
  monkeypatch.setattr(peak, "matmul_peaks", lambda size: {
      "float32": 202.4e9, "bfloat16": 404e9})
  lines = peak.peak_report(60, 433).splitlines()
  assert lines == ["bfloat16 matmul peak 404 GFLOP/s; float32 matmul peak "
                   "(P) 202",
                   "training budget: 60 min x 433 / P = 128.4"]
  assert float(lines[-1].split()[-1]) == round(60 * 433 / 202.4, 1)
  assert len(peak.peak_report().splitlines()) == 1


def test_a_small_product_measures_a_positive_rate():
  for chain in (None, 3):
    rates = peak.matmul_peaks(64, repeats=1, chain=chain)
    assert set(rates) == {"float32", "bfloat16"}
    assert all(rate > 0 for rate in rates.values())
