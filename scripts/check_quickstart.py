"""Holds recipes/quickstart.sh's output to what the README says of it: the
test split's BLEU is near 100 (at least MIN_BLEU) and the SavedModel
translated its sentence. .ci/run runs it on the quickstart's log.

    python scripts/check_quickstart.py QUICKSTART_LOG
"""

import re
import sys

MIN_BLEU = 90.0


def check(text):
  """'' when the log holds a BLEU of at least MIN_BLEU and a translation
  through the SavedModel; else what is wrong."""
  scores = re.findall(r"^BLEU \(sacreBLEU, detokenized\) = ([\d.]+)", text,
                      re.M)
  if not scores:
    return "no BLEU line in the quickstart's output"
  if float(scores[-1]) < MIN_BLEU:
    return (f"the quickstart ended at {scores[-1]} BLEU; the README says "
            f"near 100 (at least {MIN_BLEU:g} expected)")
  served = re.findall(r"^translation: (.*?)\s+\(through the SavedModel", text,
                      re.M)
  if not served or not served[-1].strip():
    return "the SavedModel translated nothing"
  return ""


def main(argv):
  if len(argv) != 2:
    print(__doc__, file=sys.stderr)
    return 2
  with open(argv[1], encoding="utf-8") as f:
    wrong = check(f.read())
  if wrong:
    print(f"check_quickstart: {wrong}", file=sys.stderr)
    return 1
  print("check_quickstart: the quickstart ends near 100 BLEU and serves")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
