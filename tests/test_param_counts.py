"""Parameter counts against Table 3 (shared vocabulary of 37,000)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "benchmarks"))
import param_counts

VOCAB = 37000
# The paper's counts sit ~2M above ours in every row, as if its embedding
# matrix had ~41K rows (see README, "Parameter counts"). For N=2 that is more
# than 5%; we pin our count's gap there instead of hiding it.
KNOWN_GAP = {"transformer_table3_c_n2": (-0.07, -0.06)}


@pytest.mark.parametrize("name, paper", param_counts.paper_rows(),
                         ids=[n for n, _ in param_counts.paper_rows()])
def test_params_match_table3(name, paper):
  ours = param_counts.count(name, VOCAB) / 1e6
  ratio = (ours - paper) / paper
  print(f"{name}: ours {ours:.2f}M, paper {paper}M ({100 * ratio:+.1f}%)")
  if name in KNOWN_GAP:
    low, high = KNOWN_GAP[name]
    assert low <= ratio <= high
  elif name == "transformer_big":
    assert abs(ratio) <= 0.03
  else:
    assert abs(ratio) <= 0.05


def test_exact_count_of_base():
  """N=6, d=512, d_ff=2048, h=8, shared 37,000 x 512 embedding, biases and
  LayerNorm gains included."""
  d, ff, v, n = 512, 2048, VOCAB, 6
  attention = 4 * (d * d + d)
  ffn = d * ff + ff + ff * d + d
  encoder = attention + ffn + 2 * 2 * d
  decoder = 2 * attention + ffn + 3 * 2 * d
  assert param_counts.count("transformer_base", v) == v * d + n * (
      encoder + decoder)
