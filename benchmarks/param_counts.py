"""Prints our parameter counts beside the paper's (Table 3), for a shared
vocabulary of 37,000 tokens (section 5.1).

Usage: python benchmarks/param_counts.py [--vocab_size=37000]
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import t2t_keras
from t2t_keras.hparams_sets import transformer as sets


def paper_rows():
  """(hparams set name, paper's params in millions) for every row that has
  a params figure in Table 3."""
  rows = [("transformer_base", sets.TABLE3_BASE[-1])]
  rows += [(f"transformer_table3_{row}", params)
           for row, _, _, _, params in sets.TABLE3 if params]
  rows.append(("transformer_big", sets.TABLE3_BIG[-1]))
  return rows


def count(hparams_set, vocab_size):
  model = t2t_keras.build_model(hparams_set, vocab_size=vocab_size)
  n = model.count_params()
  del model
  return n


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--vocab_size", type=int, default=37000)
  args = parser.parse_args()
  print(f"{'hparams set':32s} {'ours (M)':>9s} {'paper (M)':>9s} {'diff':>7s}")
  for name, paper in paper_rows():
    ours = count(name, args.vocab_size) / 1e6
    print(f"{name:32s} {ours:9.2f} {paper:9.0f} "
          f"{100 * (ours - paper) / paper:+6.1f}%")


if __name__ == "__main__":
  main()
