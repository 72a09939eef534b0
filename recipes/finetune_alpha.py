"""recipes/finetune_news.sh's choice of the interpolation weight
(INTERPOLATE="ROW auto"): each candidate ALPHA's model (ROW's weights x
ALPHA + the source's x (1 - ALPHA)) has translated the dev half of
newstest2013 and Multi30k val; the choice is made on those alone, by the
recipe's aim: among the candidates whose val BLEU is within 1.0 of the
source's, the one with the best dev chrF; if none is, the one with the best
val BLEU. Prints one line a candidate and writes the chosen ALPHA to OUT.

  python recipes/finetune_alpha.py DIR ALPHA... --dev=DEV --val=VAL \
      --source_val=SOURCE_VAL_TRANSLATION --out=FILE

DIR/alpha_ALPHA/{dev.de,multi30k_val.de} are the candidates' translations;
DEV and VAL are the references' paths without ``.de``.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from finetune_table import _lines, _scores  # noqa: E402  pylint: disable=wrong-import-position


def choose(candidates, source_val_bleu):
  """The chosen ALPHA of ``candidates`` ({alpha: {"dev": (BLEU, chrF),
  "val": (BLEU, chrF)}}), by the rule of the module docstring."""
  kept = [a for a, s in candidates.items()
          if s["val"][0] >= source_val_bleu - 1.0]
  if kept:
    return max(kept, key=lambda a: (candidates[a]["dev"][1], -float(a)))
  return max(candidates, key=lambda a: (candidates[a]["val"][0], -float(a)))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("dir")
  parser.add_argument("alphas", nargs="+")
  parser.add_argument("--dev", required=True)
  parser.add_argument("--val", required=True)
  parser.add_argument("--source_val", required=True)
  parser.add_argument("--out", required=True)
  args = parser.parse_args()
  dev, val = _lines(args.dev + ".de"), _lines(args.val + ".de")
  source = _scores(_lines(args.source_val), val)[0]
  candidates = {}
  for alpha in args.alphas:
    folder = os.path.join(args.dir, f"alpha_{alpha}")
    candidates[alpha] = {
        "dev": _scores(_lines(os.path.join(folder, "dev.de")), dev),
        "val": _scores(_lines(os.path.join(folder, "multi30k_val.de")), val)}
    s = candidates[alpha]
    print(f"interpolation {alpha}: newstest2013 dev half BLEU "
          f"{s['dev'][0]:.2f} / chrF {s['dev'][1]:.2f}, Multi30k val BLEU "
          f"{s['val'][0]:.2f} (the source {source:.2f})")
  chosen = choose(candidates, source)
  print(f"chosen on dev: {chosen}")
  with open(args.out, "w", encoding="utf-8") as f:
    f.write(chosen + "\n")


if __name__ == "__main__":
  main()
