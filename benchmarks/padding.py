"""Padding waste of the bucketed input pipeline beside naive batches.

Generates translate_ende from Multi30k's local files (train; newstest2013 as
dev) with an 8,000-piece vocabulary, then prints pad tokens / all tokens
(inputs and targets together) over the first N training batches of
  - the pipeline: length buckets, about batch_size tokens a batch;
  - naive batches: shuffled, a fixed number of sentences a batch, each padded
    to its longest, with the same mean number of sentences per batch.

Usage: python benchmarks/padding.py [--shared_data ../shared/data]
       [--data_dir /tmp/t2t_padding] [--batches 300]
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from t2t_keras import registry
from t2t_keras.data import pipeline
from t2t_keras.data.datagen import generate
from t2t_keras.hparams import HParams


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--shared_data",
                      default=os.path.join(os.path.dirname(REPO), "shared",
                                           "data"))
  parser.add_argument("--data_dir", default="/tmp/t2t_padding")
  parser.add_argument("--batches", type=int, default=300)
  args = parser.parse_args()
  generate("translate_ende", args.data_dir, raw_dir=args.shared_data,
           raw_prefixes="train=multi30k/train,dev=wmt14/newstest2013",
           vocab_size=8000, log=lambda _: None)
  problem = registry.problem("translate_ende")
  print(f"Multi30k train through translate_ende (local files), "
        f"{args.batches} batches each")
  print(f"{'batch_size':>10s} {'sentences':>9s} {'bucketed':>9s} "
        f"{'naive':>7s}")
  for batch_size in (1024, 2048, 4096, 8192):
    hp = HParams(batch_size=batch_size, max_length=256)
    batches = problem.batches("train", args.data_dir, hp, seed=1)
    rows = [int(b["inputs"].shape[0]) for b in batches.take(args.batches)]
    sentences = round(sum(rows) / len(rows))
    bucketed = pipeline.padding_fraction(batches, limit=args.batches)
    naive_batches = problem.examples("train", args.data_dir).shuffle(
        10000, seed=1).repeat().padded_batch(
            sentences, padded_shapes={"inputs": [None], "targets": [None]})
    naive = pipeline.padding_fraction(naive_batches, limit=args.batches)
    print(f"{batch_size:10d} {sentences:9d} {100 * bucketed:8.1f}% "
          f"{100 * naive:6.1f}%", flush=True)


if __name__ == "__main__":
  main()
