"""Streaming decode of hostile text: lines in, lines out, peak memory, speed.

Writes N lines (default 10,000) of which about 4% are very long (2,000 to
20,000 characters), and others hold invalid UTF-8, NUL and control bytes,
CR/VT/FF/U+2028 inside the line, or nothing at all; decodes them with
t2t-decoder's streaming path (a window of lines at a time) and prints one
table. The model is the transformer_tiny run in --model_dir (the README's
quickstart) or, without one, a random-weight transformer_tiny over a
vocabulary built here (its sentences run to the length limit: a worst case).

Usage: python benchmarks/decode_stream.py [--lines 10000] [--window 1000]
         [--model_dir /tmp/t2t_train/synthetic --data_dir /tmp/t2t_data/synthetic]
"""

import argparse
import os
import random
import resource
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import t2t_keras
from t2t_keras import registry
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.stream import decode_stream
from t2t_keras.io.lines import LineReader
from t2t_keras.models.builder import load_model_from_dir

WORDS = ("the dog sees a cat near old house river teacher helps children big "
         "tree these small red girl boy runs").split()
ODD = [b"", b"  \t ", b"caf\xe9", b"\xff\xfe\x00", b"nul\x00here",
       b"esc\x1b[1m bell\x07", b"cr\rhere", b"vt\x0bff\x0chere",
       "ls\u2028ps\u2029nel\x85".encode(), "中文 русский ☃".encode(),
       b"\xe2\x82 cut"]


def hostile(count, seed=0):
  rng = random.Random(seed)
  for i in range(count):
    if i % 25 == 7:                                 # 4%: very long lines
      yield " ".join(rng.choice(WORDS) for _ in range(
          rng.randint(400, 4000))).encode()[:20000]
    elif i % 10 == 3:
      yield ODD[i % len(ODD)]
    else:
      yield " ".join(rng.choice(WORDS) for _ in range(
          rng.randint(1, 20))).encode()


def model_and_vocab(args):
  if args.model_dir:
    model, _, _, _ = load_model_from_dir(args.model_dir)
    return model, registry.problem(args.problem).vocab(args.data_dir), \
        "trained " + args.model_dir
  texts = [b.decode("utf-8", "replace") for b in hostile(3000, seed=1)]
  vocab = SubwordVocab.build(texts, 600)
  model = t2t_keras.build_model("transformer_tiny", vocab_size=vocab.size)
  return model, vocab, "random-weight transformer_tiny"


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--lines", type=int, default=10000)
  parser.add_argument("--window", type=int, default=1000)
  parser.add_argument("--model_dir")
  parser.add_argument("--data_dir")
  parser.add_argument("--problem", default="translate_synthetic")
  args = parser.parse_args()
  model, vocab, what = model_and_vocab(args)
  decoder = Decoder(model, vocab, decode_hparams("beam_size=4,batch_size=32"))
  with tempfile.TemporaryDirectory() as tmp:
    source, target = os.path.join(tmp, "in.txt"), os.path.join(tmp, "out.txt")
    with open(source, "wb") as f:
      f.write(b"\n".join(hostile(args.lines)) + b"\n")
    start = time.time()
    with open(source, "rb") as f, open(target, "wb") as out:
      reader = LineReader(f, source)
      written = decode_stream(decoder, reader, out, window=args.window,
                              log=lambda _: None)
    seconds = time.time() - start
    with open(target, "rb") as f:
      lines_out = f.read().count(b"\n")
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
  print(f"{what}; beam 4, batch 32, window {args.window}, "
        f"{os.cpu_count()} CPUs")
  print(f"{'lines in':>9} {'lines out':>9} {'written':>8} {'bad UTF-8':>9} "
        f"{'cut':>5} {'peak RSS GB':>11} {'sent/s':>7}")
  print(f"{args.lines:>9,} {lines_out:>9,} {written:>8,} "
        f"{reader.bad_lines:>9,} "
        f"{decoder.stats.truncated:>5,} {peak:>11.2f} "
        f"{written / seconds:>7.1f}")


if __name__ == "__main__":
  main()
