"""The commands against a hostile user: bad files, odd bytes, signals, a full
disk, two commands at once. Each case runs a real t2t-* command in a fresh
process and checks what a user would: the exit code, no traceback, one
`error:` line naming the input (or a clean success), nothing the user had
before changed, and no partial output left. Prints a Markdown table.

    python scripts/hostile_user.py [--work_dir=/tmp/t2t_hostile]

It first makes what the cases damage: translate_synthetic's data, a tiny
run (40 steps) and its SavedModel, about two minutes on 2 cores. Exit
status 1 if any case fails. The cases are in scripts/hostile_cases.py,
hostile_settings.py, hostile_inputs.py and hostile_transactions.py, built
from hostile_steps.py.
"""

import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile_cases  # noqa: E402
import hostile_inputs  # noqa: E402
import hostile_settings  # noqa: E402
import hostile_transactions  # noqa: E402

TINY = ("hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2,"
        "batch_size=1024,learning_rate_warmup_steps=20")


def run(args, env=None, limit=None, timeout=600):
  """A command's CompletedProcess; ``limit``: a file-size limit (bytes)."""
  environ = dict(os.environ, **(env or {}))
  if limit:
    # bash counts ulimit -f in 1,024-byte blocks.
    args = ["bash", "-c", f"ulimit -f {max(1, limit // 1024)}; exec \"$@\"",
            "_"] + list(args)
  return subprocess.run(args, capture_output=True, text=True, env=environ,
                        timeout=timeout, check=False)


def make_world(work):
  """Data, a tiny run and its SavedModel under ``work`` (kept between
  invocations: the cases copy what they damage)."""
  data, run_dir = os.path.join(work, "data"), os.path.join(work, "run")
  export = os.path.join(work, "export")
  if not os.path.isfile(os.path.join(run_dir, "ckpt-40.index")):
    shutil.rmtree(run_dir, ignore_errors=True)
    for args in (["t2t-datagen", "--problem=translate_synthetic",
                  f"--data_dir={data}"],
                 ["t2t-trainer", "--problem=translate_synthetic",
                  "--hparams_set=transformer_tiny", f"--hparams={TINY}",
                  f"--data_dir={data}", f"--output_dir={run_dir}",
                  "--train_steps=40", "--save_checkpoints_steps=20",
                  "--noeval_bleu"]):
      done = run(args)
      if done.returncode:
        sys.exit(f"setup failed: {' '.join(args)}\n{done.stderr[-2000:]}")
  if not glob.glob(os.path.join(export, "*", "saved_model.pb")):
    shutil.rmtree(export, ignore_errors=True)
    done = run(["t2t-exporter", "--problem=translate_synthetic",
                f"--data_dir={data}", f"--output_dir={run_dir}",
                f"--export_dir={export}", "--export_version=1"])
    if done.returncode:
      sys.exit(f"setup failed: t2t-exporter\n{done.stderr[-2000:]}")
  return {"data": data, "run": run_dir, "export": export,
          "saved": os.path.join(export, "1")}


def digest(folder):
  """{path: sha256} of every file under ``folder``."""
  found = {}
  for root, _, files in os.walk(folder):
    for name in files:
      path = os.path.join(root, name)
      if os.path.islink(path):     # its target is digested where it lies
        continue
      if not os.path.isfile(path):   # a FIFO or device a case made: unread
        continue
      with open(path, "rb") as f:
        found[path] = hashlib.sha256(f.read()).hexdigest()
  return found


def judge(case, done, before, after, here):
  """'' when the case held, else what did not."""
  stderr = done.stderr if done else ""
  want = case.get("exit", 2 if case.get("error") else 0)
  if done is not None and done.returncode != want:
    return f"exit {done.returncode}, expected {want}: {stderr[-300:]}"
  if "Traceback" in stderr:
    return "a traceback: " + stderr[-300:]
  errors = [l for l in stderr.splitlines() if l.startswith("error: ")]
  if case.get("error"):
    if len(errors) != 1:
      return f"{len(errors)} error lines: {stderr[-300:]}"
    text = case["error"](here) if callable(case["error"]) else case["error"]
    if text not in errors[0]:
      return f"the line lacks {text!r}: {errors[0]}"
  elif errors:
    return "an error line on success: " + errors[0]
  mine = here["dir"] + os.sep if case.get("own_changes") else None
  lost = [p for p, h in before.items() if after.get(p) != h and
          not (mine and p.startswith(mine))]
  if lost:
    return f"changed or lost: {', '.join(sorted(lost)[:3])}"
  leftovers = [p for p in after if p not in before and (
      ".tmp" in os.path.basename(p) or p.endswith(".partial") or
      p.endswith(".lock"))]
  if leftovers:
    return f"partial output left: {', '.join(sorted(leftovers)[:3])}"
  check = case.get("check")
  return (check(here, done) or "") if check else ""


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--work_dir", default="/tmp/t2t_hostile")
  parser.add_argument("--only", default="", help="run cases whose name "
                      "contains this")
  parser.add_argument("--first", type=int, default=1, help="run cases from "
                      "this number on")
  args = parser.parse_args()
  world = make_world(args.work_dir)
  rows, failed = [], 0
  for number, case in enumerate(hostile_cases.CASES + hostile_settings.CASES +
                                hostile_inputs.CASES +
                                hostile_transactions.CASES, 1):
    if args.only not in case["name"] or number < args.first:
      continue
    here = os.path.join(args.work_dir, "cases", f"{number:02d}")
    shutil.rmtree(here, ignore_errors=True)
    os.makedirs(here)
    here = dict(world, dir=here)
    start = time.time()
    command = case["setup"](here) if case.get("setup") else None
    command = command or case["command"](here)
    before = digest(args.work_dir)
    if case.get("during"):
      done = case["during"](here, command)
    else:
      done = run(command, env=case.get("env"), limit=case.get("limit"))
    after = digest(args.work_dir)
    wrong = judge(case, done, before, after, here)
    failed += bool(wrong)
    line = [l for l in (done.stderr if done else "").splitlines()
            if l.startswith("error: ") or l.startswith("stopped")]
    said = (line[-1] if line else "exit 0").replace("|", "/")
    said = said.replace(args.work_dir, "W")
    rows.append(f"| {number} | {case['kind']} | {case['name']} | "
                f"{said[:110]} | {'FAILED: ' + wrong[:200] if wrong else 'ok'}"
                f" |")
    print(f"{number:2d} {'ok' if not wrong else 'FAILED'} {case['name']} "
          f"({time.time() - start:.0f} s){': ' + wrong if wrong else ''}",
          file=sys.stderr, flush=True)
  print("| # | kind | case | what the user sees | held |")
  print("| --- | --- | --- | --- | --- |")
  print("\n".join(rows))
  print(f"\n{len(rows) - failed} of {len(rows)} cases held "
        f"(W is {args.work_dir})")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
