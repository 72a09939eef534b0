"""Table 1 of the paper: per-layer cost of four layer types.

For sequence length n, representation dimension d, convolution kernel width
k and restriction neighbourhood r: complexity per layer (multiply-adds,
without constants), the minimum number of sequential operations, and the
maximum path length between two positions. The paper gives orders of
magnitude; these are the same expressions evaluated.
"""

import math


def table1(n, d, k=3, r=None):
  """Rows (layer type, formulas, complexity, sequential operations, maximum
  path length) for the given sizes; r defaults to the paper's suggestion of
  a small neighbourhood (k here)."""
  r = r or k
  return [
      ("Self-Attention", "O(n^2 d), O(1), O(1)", n * n * d, 1, 1),
      ("Recurrent", "O(n d^2), O(n), O(n)", n * d * d, n, n),
      ("Convolutional", "O(k n d^2), O(1), O(log_k n)", k * n * d * d, 1,
       max(1, math.ceil(math.log(n, k))) if k > 1 else n),
      ("Self-Attention (restricted)", "O(r n d), O(1), O(n/r)", r * n * d, 1,
       math.ceil(n / r)),
  ]
