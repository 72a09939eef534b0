"""Decoding speed: sentences/s and target tokens/s, beam 4, batch 32.

1. A transformer_base-sized model (vocabulary 37,000) with random weights
   on random 25-token inputs: it seldom emits EOS, so most sentences run to
   the limit, input length + 50 (a worst case).
2. With --model_dir, --data_dir, --problem and --source_file (or --split,
   one of the problem's): a trained model on real sentences, timed after
   --warmup batches decoded first (tracing, and a GPU's autotuning).
   --trained_only skips 1.

Usage: python benchmarks/decode_speed.py [--sentences 64]
         [--model_dir RUN --data_dir DATA --problem translate_ende
          (--source_file ../shared/data/multi30k/test_2016_flickr.en |
           --split test) [--warmup 4] [--trained_only]]
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import tensorflow as tf

import t2t_keras
from t2t_keras import registry
from t2t_keras.decoding import beam_search
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.models.builder import load_model_from_dir


def random_base(args):
  model = t2t_keras.build_model("transformer_base", vocab_size=37000)
  search = tf.function(lambda x: beam_search(model, x, 4, 0.6, 50),
                       input_signature=[tf.TensorSpec([None, None], tf.int32)])
  rng = np.random.RandomState(0)
  batches = [tf.constant(np.concatenate(
      [rng.randint(2, 37000, (32, 24)), np.ones((32, 1))], 1), tf.int32)
             for _ in range(max(1, args.sentences // 32))]
  search(batches[0])                                   # trace
  start, tokens = time.time(), 0
  for batch in batches:
    ids, _ = search(batch)
    tokens += int(np.sum(ids.numpy()[:, 0] != 0))
  seconds = time.time() - start
  return len(batches) * 32, tokens, seconds


def trained(args):
  model, _, _, _ = load_model_from_dir(args.model_dir)
  vocab = registry.problem(args.problem).vocab(args.data_dir)
  decoder = Decoder(model, vocab, decode_hparams("beam_size=4,batch_size=32"))
  if args.split:
    from t2t_keras.decoding.run import split_text
    problem = registry.problem(args.problem).for_data(args.data_dir)
    _, lines, _ = split_text(problem, args.data_dir, args.split)
  else:
    with open(args.source_file, encoding="utf-8") as f:
      lines = [line.rstrip("\n") for line in f]
  lines = lines[:args.sentences]
  decoder.decode(lines[:32 * args.warmup])           # trace, autotune
  decoder.stats.sentences = decoder.stats.target_tokens = 0
  decoder.stats.seconds = 0.0
  decoder.decode(lines)
  return (decoder.stats.sentences, decoder.stats.target_tokens,
          decoder.stats.seconds)


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--sentences", type=int, default=64)
  parser.add_argument("--model_dir")
  parser.add_argument("--data_dir")
  parser.add_argument("--problem", default="translate_ende")
  parser.add_argument("--source_file")
  parser.add_argument("--split")
  parser.add_argument("--warmup", type=int, default=4)
  parser.add_argument("--trained_only", action="store_true")
  args = parser.parse_args()
  print(f"beam 4, alpha 0.6, extra length 50, batch 32, {os.cpu_count()} CPUs")
  print(f"{'model':42s} {'sentences':>9s} {'sent/s':>7s} {'tokens/s':>9s}")
  runs = [] if args.trained_only else [
      ("transformer_base, random weights", random_base)]
  if args.model_dir:
    runs.append((f"trained: {os.path.basename(args.model_dir.rstrip('/'))}",
                 trained))
  for name, fn in runs:
    sentences, tokens, seconds = fn(args)
    print(f"{name:42s} {sentences:9d} {sentences / seconds:7.2f} "
          f"{tokens / seconds:9.1f}", flush=True)


if __name__ == "__main__":
  main()
