"""Peak memory of one SavedModel request by its number of sentences.

    python benchmarks/request_memory.py [--sizes=200,2000] [--work_dir=DIR]

Imports tensor2tensor's transformer_tiny reference run (tests/fixtures/t2t,
1.2M parameters), exports it (its chunk: the decode hparam batch_size, 0:
32 sentences), then, each in a fresh process, loads the SavedModel and
sends one request of N lines of Multi30k's val.en (repeated as needed),
and prints the process's peak resident memory: the growth from 200 to
2,000 sentences is what a chunk bounds.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "t2t")
SOURCE = os.path.join(os.path.dirname(REPO), "shared", "data", "multi30k",
                      "val.en")

REQUEST = r"""
import resource, sys, time
import tensorflow as tf
import tensorflow_text  # noqa: F401
path, source, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [l.strip() for l in open(source, encoding="utf-8")]
lines = (lines * (n // len(lines) + 1))[:n]
served = tf.saved_model.load(path).signatures["serving_default"]
served(inputs=tf.constant(lines[:2]))            # warm-up: traced, loaded
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.time()
out = served(inputs=tf.constant(lines))["outputs"].numpy()
seconds = time.time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(out), before / 1024, peak / 1024, seconds)
"""


def run(command):
  done = subprocess.run(command, capture_output=True, text=True, check=False)
  if done.returncode:
    sys.exit(done.stderr[-3000:])
  return done.stdout


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", default="200,2000")
  parser.add_argument("--work_dir", default=None)
  parser.add_argument("--batch_size", type=int, default=0,
                      help="the export's chunk (decode hparam batch_size)")
  args = parser.parse_args()
  work = args.work_dir or tempfile.mkdtemp(prefix="request_memory_")
  run_dir, data_dir = os.path.join(work, "run"), os.path.join(work, "data")
  if not os.path.isdir(run_dir):
    run([sys.executable, "-m", "t2t_keras.bin.t2t_import",
         f"--t2t_output_dir={FIXTURES}/tiny",
         f"--t2t_data_dir={FIXTURES}/data", f"--output_dir={run_dir}",
         f"--data_dir={data_dir}"])
  export_root = os.path.join(work, f"export_{args.batch_size}")
  if not glob.glob(os.path.join(export_root, "*")):
    run([sys.executable, "-m", "t2t_keras.bin.t2t_exporter",
         "--problem=t2t_import", f"--data_dir={data_dir}",
         f"--output_dir={run_dir}", f"--export_dir={export_root}",
         f"--decode_hparams=batch_size={args.batch_size}"])
  path = sorted(glob.glob(os.path.join(export_root, "*")))[-1]
  print(f"one request to {path} (chunk: batch_size={args.batch_size}, "
        "0: 32), each in a fresh process\n")
  print("| sentences | RSS before, MB | peak RSS, MB | seconds |")
  print("| --- | --- | --- | --- |")
  for n in (int(s) for s in args.sizes.split(",")):
    count, before, peak, seconds = run(
        [sys.executable, "-c", REQUEST, path, SOURCE, str(n)]).split()
    assert int(count) == n
    print(f"| {n:,} | {float(before):,.0f} | {float(peak):,.0f} | "
          f"{float(seconds):.1f} |")


if __name__ == "__main__":
  main()
