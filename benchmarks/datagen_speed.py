"""t2t-datagen at WMT scale: pairs/s and peak memory as the corpus grows.

Builds translate_ende's data from the shared WMT training sample (10,000
pairs) repeated to 100,000 and 1,000,000 pairs (newstest2013 as dev), each
size in a fresh process, and prints the whole run's time, the train split's
encoding rate and the process's peak resident memory. Memory should not
grow with the corpus: datagen streams lines into shards.

Usage: python benchmarks/datagen_speed.py [--shared_data ../shared/data]
       [--work_dir /tmp/t2t_datagen_speed] [--sizes 100000,1000000]
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = "wmt_train_sample/wmt15_ende_10k.tok"


def make_corpus(shared, raw, pairs):
  """raw/train.{en,de}: the sample repeated to ``pairs`` lines; dev:
  newstest2013."""
  os.makedirs(raw, exist_ok=True)
  for lang in ("en", "de"):
    with open(os.path.join(shared, f"{SAMPLE}.{lang}"), "rb") as f:
      lines = f.read().splitlines(keepends=True)
    with open(os.path.join(raw, f"train.{lang}"), "wb") as out:
      for i in range(pairs):
        out.write(lines[i % len(lines)])
    shutil.copy(os.path.join(shared, f"wmt14/newstest2013.{lang}"),
                os.path.join(raw, f"dev.{lang}"))


def one_run(raw, data_dir):
  """In this process: datagen, then a JSON line of the figures."""
  sys.path.insert(0, REPO)
  from t2t_keras.data.datagen import generate
  lines = []
  start = time.time()
  generate("translate_ende", data_dir, raw_dir=raw, log=lines.append)
  seconds = time.time() - start
  rates = [int(m.group(1).replace(",", "")) for m in
           (re.search(r"train: [\d,]+ pairs encoded \(([\d,]+)/s\)", l)
            for l in lines) if m]
  peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  print(json.dumps({"seconds": seconds, "train_rate": rates[-1] if rates
                    else None, "peak_gb": peak_kb / 1e6}))


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--shared_data",
                      default=os.path.join(os.path.dirname(REPO), "shared",
                                           "data"))
  parser.add_argument("--work_dir", default="/tmp/t2t_datagen_speed")
  parser.add_argument("--sizes", default="100000,1000000")
  parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.one:
    return one_run(*args.one)
  print(f"translate_ende datagen (37,000-piece BPE from a 1 MB sample per "
        f"language) from {SAMPLE} repeated; one process per size; "
        f"{os.cpu_count()} CPUs")
  print(f"{'pairs':>10} {'total s':>8} {'train pairs/s':>14} {'peak GB':>8}")
  for pairs in (int(s) for s in args.sizes.split(",")):
    raw = os.path.join(args.work_dir, f"raw_{pairs}")
    data = os.path.join(args.work_dir, f"data_{pairs}")
    shutil.rmtree(data, ignore_errors=True)
    make_corpus(args.shared_data, raw, pairs)
    done = subprocess.run([sys.executable, os.path.abspath(__file__),
                           "--one", raw, data], capture_output=True,
                          text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{pairs:>10,} {figures['seconds']:>8.1f} "
          f"{figures['train_rate'] or 0:>14,} {figures['peak_gb']:>8.2f}")
    shutil.rmtree(raw)
    shutil.rmtree(data)
  return 0


if __name__ == "__main__":
  sys.exit(main())
