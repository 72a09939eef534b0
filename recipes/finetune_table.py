"""The table recipes/finetune_news.sh prints: one row per fine-tuning
setting of one run, from the translations each row's directory holds.

  python recipes/finetune_table.py RUN ROW... --news=NEWSTEST2013 \
      --val=MULTI30K_VAL [--chosen=ROW --test=TEST_2016_FLICKR]

RUN/ROW/newstest2013.de translates all of NEWSTEST2013.en: its first half
chose the settings (with Multi30k val), its second half, never used for a
choice, is the table's news figure. RUN/ROW/multi30k_val.de translates
Multi30k val. The source row is ``source``; ``news`` (fine-tuned on news
alone) is the gain that another row's news chrF is measured against. A row
"keeps" Multi30k when its val BLEU is within 1.0 of the source's and its
news chrF gains at least 80% of what news alone gains (issue 96's aim).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from t2t_keras.metrics.bleu import corpus_score  # noqa: E402


def _lines(path):
  with open(path, encoding="utf-8") as f:
    return [line.rstrip("\n") for line in f]


def _scores(hypotheses, references):
  return tuple(corpus_score(name, hypotheses, references)[0]
               for name in ("bleu", "chrf"))


def row_scores(run, row, news, val):
  """{set: (BLEU, chrF)} of one row: news_a (first half), news_b (second
  half), val."""
  news_out = _lines(os.path.join(run, row, "newstest2013.de"))
  half = len(news) // 2
  return {"news_a": _scores(news_out[:half], news[:half]),
          "news_b": _scores(news_out[half:], news[half:]),
          "val": _scores(_lines(os.path.join(run, row, "multi30k_val.de")),
                         val)}


def keeps(scores, source, alone):
  """Whether a row meets the aim (see the module docstring), judged on
  the second half and val."""
  gain = alone["news_b"][1] - source["news_b"][1]
  return (scores["val"][0] >= source["val"][0] - 1.0
          and scores["news_b"][1] - source["news_b"][1] >= 0.8 * gain)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("run")
  parser.add_argument("rows", nargs="+")
  parser.add_argument("--news", required=True, help="newstest2013 (no .en)")
  parser.add_argument("--val", required=True, help="Multi30k val (no .de)")
  parser.add_argument("--chosen", default="")
  parser.add_argument("--test", default="", help="test_2016_flickr (no .de)")
  parser.add_argument("--descriptions", default="",
                      help="ROW=text;ROW=text: what each row is")
  args = parser.parse_args()
  news, val = _lines(args.news + ".de"), _lines(args.val + ".de")
  described = dict(item.split("=", 1) for item in
                   args.descriptions.split(";") if "=" in item)
  table = {row: row_scores(args.run, row, news, val) for row in args.rows}
  source, alone = table.get("source"), table.get("news")
  half = len(news) // 2
  print(f"| row | setting | newstest2013 lines {half + 1}-{len(news)} BLEU "
        f"/ chrF | Multi30k val BLEU / chrF | newstest2013 lines 1-{half} "
        "(choice) | within 1 BLEU, 80% of the chrF gain |")
  print("| --- | --- | --- | --- | --- | --- |")
  for row, s in table.items():
    verdict = ("-" if row in ("source", "news") or not (source and alone)
               else "yes" if keeps(s, source, alone) else "no")
    print(f"| {row} | {described.get(row, '')} | {s['news_b'][0]:.2f} / "
          f"{s['news_b'][1]:.2f} | {s['val'][0]:.2f} / {s['val'][1]:.2f} | "
          f"{s['news_a'][0]:.2f} / {s['news_a'][1]:.2f} | {verdict} |")
  if args.chosen and args.test:
    path = os.path.join(args.run, args.chosen, "test_2016_flickr.de")
    bleu, chrf = _scores(_lines(path), _lines(args.test + ".de"))
    src = os.path.join(args.run, "source", "test_2016_flickr.de")
    line = (f"Multi30k test2016, {args.chosen}: BLEU {bleu:.2f} / chrF "
            f"{chrf:.2f}")
    if os.path.exists(src):
      sb, sc = _scores(_lines(src), _lines(args.test + ".de"))
      line += f" (the source: {sb:.2f} / {sc:.2f})"
    print(line)


if __name__ == "__main__":
  main()
