"""recipes/finetune_news.sh's choice of the interpolated model
(INTERPOLATE="ROW[,ROW...] auto"): each candidate, a ROW and a weight
ALPHA (ROW's weights x ALPHA + the source's x (1 - ALPHA)), has translated
the dev half of newstest2013 and Multi30k val; the choice is made on those
alone, by the recipe's aim: among the candidates whose val BLEU is within
1.0 of the source's, the one with the best dev chrF; if none is, the one
with the best val BLEU (ties: the smaller weight, then the earlier row).
Prints one line a candidate and writes the chosen "ROW ALPHA" to OUT.

  python recipes/finetune_alpha.py DIR ROW:ALPHA... --dev=DEV --val=VAL \
      --source_val=SOURCE_VAL_TRANSLATION --out=FILE

DIR/ROW_alpha_ALPHA/{dev.de,multi30k_val.de} are the candidates'
translations; DEV and VAL are the references' paths without ``.de``.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from finetune_table import _lines, _scores  # noqa: E402


def choose(candidates, source_val_bleu):
  """The chosen (row, alpha) of ``candidates`` ({(row, alpha): {"dev":
  (BLEU, chrF), "val": (BLEU, chrF)}}, in the order given), by the rule of
  the module docstring."""
  order = {key: i for i, key in enumerate(candidates)}

  def tie(key):
    return (-float(key[1]), -order[key])
  kept = [k for k, s in candidates.items()
          if s["val"][0] >= source_val_bleu - 1.0]
  if kept:
    return max(kept, key=lambda k: (candidates[k]["dev"][1],) + tie(k))
  return max(candidates, key=lambda k: (candidates[k]["val"][0],) + tie(k))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("dir")
  parser.add_argument("candidates", nargs="+", metavar="ROW:ALPHA")
  parser.add_argument("--dev", required=True)
  parser.add_argument("--val", required=True)
  parser.add_argument("--source_val", required=True)
  parser.add_argument("--out", required=True)
  args = parser.parse_args()
  dev, val = _lines(args.dev + ".de"), _lines(args.val + ".de")
  source = _scores(_lines(args.source_val), val)[0]
  candidates = {}
  for candidate in args.candidates:
    row, alpha = candidate.rsplit(":", 1)
    folder = os.path.join(args.dir, f"{row}_alpha_{alpha}")
    s = candidates[(row, alpha)] = {
        "dev": _scores(_lines(os.path.join(folder, "dev.de")), dev),
        "val": _scores(_lines(os.path.join(folder, "multi30k_val.de")), val)}
    print(f"{row} x {alpha}: newstest2013 dev half BLEU {s['dev'][0]:.2f} / "
          f"chrF {s['dev'][1]:.2f}, Multi30k val BLEU {s['val'][0]:.2f} "
          f"(the source {source:.2f})")
  row, alpha = choose(candidates, source)
  print(f"chosen on dev: {row} x {alpha}")
  with open(args.out, "w", encoding="utf-8") as f:
    f.write(f"{row} {alpha}\n")


if __name__ == "__main__":
  main()
