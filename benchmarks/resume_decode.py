"""A long --decode_to_file run SIGKILLed halfway and run again: the rerun
goes on from its last finished window. Prints the uninterrupted run's time,
the rerun's, their ratio, and whether the outputs are byte-identical.

    python benchmarks/resume_decode.py --data_dir=DATA --output_dir=RUN \\
        --problem=translate_synthetic --source=SOURCES [--lines=20000]

SOURCES' lines are repeated up to --lines. The kill comes once the
hidden progress record says half the lines are done.
"""

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--problem", required=True)
  parser.add_argument("--data_dir", required=True)
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--source", required=True)
  parser.add_argument("--lines", type=int, default=20000)
  args = parser.parse_args()
  work = tempfile.mkdtemp(prefix="resume_decode.")
  with open(args.source, encoding="utf-8") as f:
    lines = [l for l in f.read().split("\n") if l]
  source = os.path.join(work, "in.txt")
  with open(source, "w", encoding="utf-8") as f:
    f.writelines(l + "\n" for l in itertools.islice(itertools.cycle(lines),
                                                     args.lines))
  command = ["t2t-decoder", f"--problem={args.problem}",
             f"--data_dir={args.data_dir}", f"--output_dir={args.output_dir}",
             f"--decode_from_file={source}"]
  whole, resumed = (os.path.join(work, n) for n in ("whole.out", "res.out"))
  start = time.time()
  subprocess.run(command + [f"--decode_to_file={whole}"], check=True,
                 capture_output=True)
  uninterrupted = time.time() - start
  record = os.path.join(work, ".res.out.resume.json")
  process = subprocess.Popen(command + [f"--decode_to_file={resumed}"],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
  done = 0
  while process.poll() is None and done < args.lines // 2:
    time.sleep(0.05)
    try:
      with open(record, encoding="utf-8") as f:
        done = json.load(f)["lines"]
    except (OSError, ValueError):
      pass
  process.send_signal(signal.SIGKILL)
  process.wait()
  start = time.time()
  subprocess.run(command + [f"--decode_to_file={resumed}"], check=True,
                 capture_output=True)
  rerun = time.time() - start
  with open(whole, "rb") as a, open(resumed, "rb") as b:
    same = a.read() == b.read()
  print("| lines | killed after | uninterrupted (s) | rerun (s) | ratio | "
        "identical |")
  print("| --- | --- | --- | --- | --- | --- |")
  print(f"| {args.lines:,} | {done:,} | {uninterrupted:.1f} | {rerun:.1f} | "
        f"{rerun / uninterrupted:.2f} | {'yes' if same else 'NO'} |")
  return 0 if same else 1


if __name__ == "__main__":
  sys.exit(main())
