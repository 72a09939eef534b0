"""Decoding and exporting a run's latest checkpoint while its trainer keeps
saving (every 5 steps, keeping 2), as tensor2tensor users did during
training: every command must succeed, on the newest checkpoint that reads,
and each export must translate a line. Prints a Markdown table; exit status
1 if any command failed.

    python scripts/beside_trainer.py [--work_dir=/tmp/t2t_beside] \\
        [--decodes=6] [--exports=3]
"""

import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

TINY = ("hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2,"
        "batch_size=512,learning_rate_warmup_steps=20")
LINE = "the big dogs see a small cat near these old houses"


def run(args, stdin=None):
  return subprocess.run(args, input=stdin, capture_output=True, text=True,
                        timeout=600, check=False)


def said(done, start):
  """The lines of ``done``'s standard error that begin with ``start``."""
  return [l for l in done.stderr.splitlines() if start in l]


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--work_dir", default="/tmp/t2t_beside")
  parser.add_argument("--decodes", type=int, default=6)
  parser.add_argument("--exports", type=int, default=3)
  args = parser.parse_args()
  work = args.work_dir
  data, train_dir = os.path.join(work, "data"), os.path.join(work, "run")
  shutil.rmtree(train_dir, ignore_errors=True)
  if not glob.glob(os.path.join(data, "*.shards.json")):
    done = run(["t2t-datagen", "--problem=translate_synthetic",
                f"--data_dir={data}"])
    if done.returncode:
      sys.exit(f"datagen failed: {done.stderr[-2000:]}")
  source = os.path.join(work, "in.txt")
  with open(source, "w", encoding="utf-8") as f:
    f.write((LINE + "\n") * 20)
  trainer = subprocess.Popen(
      ["t2t-trainer", "--problem=translate_synthetic",
       "--hparams_set=transformer_tiny", f"--hparams={TINY}",
       f"--data_dir={data}", f"--output_dir={train_dir}",
       "--train_steps=1000000", "--save_checkpoints_steps=5",
       "--save_checkpoints_secs=0", "--keep_checkpoint_max=2",
       "--noeval_bleu"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
      text=True)
  rows, failed = [], 0
  try:
    deadline = time.time() + 300
    while not os.path.exists(os.path.join(train_dir, "checkpoint")):
      if trainer.poll() is not None or time.time() > deadline:
        sys.exit("the trainer saved nothing: " + trainer.stderr.read()[-2000:])
      time.sleep(0.2)
    common = ["--problem=translate_synthetic", f"--data_dir={data}",
              f"--output_dir={train_dir}"]
    for i in range(args.decodes):
      done = run(["t2t-decoder", *common, f"--decode_from_file={source}",
                  "--decode_hparams=beam_size=1"])
      ok = done.returncode == 0 and len(done.stdout.splitlines()) == 20
      used = said(done, "decoding with")
      rows.append((f"decode {i + 1}", done.returncode, ok,
                   (used[0].split(" in ")[0] if used else
                    "; ".join(said(done, "error:")) or
                    done.stderr.strip()[-300:]) +
                   "; ".join([""] + said(done, "was deleted while"))))
      failed += not ok
    for i in range(args.exports):
      root = os.path.join(work, f"export{i}")
      shutil.rmtree(root, ignore_errors=True)
      done = run(["t2t-exporter", *common, f"--export_dir={root}"])
      served = ""
      if done.returncode == 0:
        version = sorted(os.listdir(root))[-1]
        served = run(["t2t-decoder",
                      f"--saved_model_dir={os.path.join(root, version)}"],
                     stdin=LINE + "\n").stdout.strip()
      ok = done.returncode == 0 and bool(served)
      exported = [l for l in done.stdout.splitlines() + done.stderr.splitlines()
                  if l.startswith("exported")]
      rows.append((f"export {i + 1}", done.returncode, ok,
                   (exported[0].split(" (")[0] if exported else
                    "; ".join(said(done, "error:")) or
                    done.stderr.strip()[-300:]) +
                   "; ".join([""] + said(done, "was deleted while")) +
                   f"; translates to {served!r}"))
      failed += not ok
  finally:
    trainer.send_signal(signal.SIGTERM)
    trainer.wait(timeout=120)
  print("| command | exit | ok | checkpoint used |")
  print("| --- | --- | --- | --- |")
  for name, code, ok, what in rows:
    print(f"| {name} | {code} | {'yes' if ok else 'NO'} | {what} |")
  print(f"{len(rows) - failed} of {len(rows)} succeeded beside a trainer "
        "saving every 5 steps and keeping 2")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
