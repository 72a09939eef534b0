"""SIGKILL at random moments of the commands that change a folder whole:
``t2t-datagen --overwrite`` and ``t2t-import``. After each kill the folder
must hold the old state or the new one, complete (every file's SHA-256 as
an uninterrupted run leaves it), and the same command run again must end
with the new one. Prints a table; exit status 1 if any kill broke that.

    python scripts/hostile_kills.py [--kills=10] [--work_dir=/tmp/t2t_kills]
        [--only=datagen|import]

The raw files are the first 2,000 Multi30k pairs of ../shared/data (the
datagen case) and the tensor2tensor reference run in tests/fixtures/t2t
(the import case).
"""

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("T2T_SHARED_DATA",
                        os.path.join(os.path.dirname(REPO), "shared", "data"))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "t2t")
# Names a command may leave for its rerun: a staging folder, a lock.
HIDDEN = (".staging", ".lock")


def state(*folders):
  """{relative path: sha256} of the visible files under ``folders``."""
  found = {}
  for folder in folders:
    for root, dirs, names in os.walk(folder):
      dirs[:] = [d for d in dirs if not d.endswith(HIDDEN)]
      for name in names:
        if name.endswith(HIDDEN) or name.startswith("."):
          continue
        path = os.path.join(root, name)
        with open(path, "rb") as f:
          data = f.read()
        if name == "checkpoint":   # TensorFlow's state file: times aside
          data = b"".join(l for l in data.splitlines(True)
                          if b"timestamp" not in l)
        found[os.path.relpath(path, os.path.dirname(folder))] = \
            hashlib.sha256(data).hexdigest()
  return found


def run(args):
  return subprocess.run(args, capture_output=True, text=True, check=False)


def raw_files(work):
  """Two raw folders of 2,000 Multi30k pairs (train, dev), the second
  without the first train pair."""
  folders = []
  for k in range(2):
    raw = os.path.join(work, f"raw{k}")
    folders.append(raw)
    if os.path.isdir(raw):
      continue
    os.makedirs(raw)
    for split, name in (("train", "train"), ("dev", "val")):
      for lang in ("en", "de"):
        with open(os.path.join(SHARED, "multi30k", f"{name}.{lang}"),
                  encoding="utf-8") as f:
          lines = f.readlines()[:2000][k if split == "train" else 0:]
        with open(os.path.join(raw, f"{split}.{lang}"), "w",
                  encoding="utf-8") as f:
          f.writelines(lines)
  return folders


def datagen_case(work):
  """(setup(): make the old state, command, folders, old, new)."""
  old_raw, new_raw = raw_files(work)
  data = os.path.join(work, "data")
  base = ["t2t-datagen", "--problem=translate_local", "--source_lang=en",
          "--target_lang=de", "--vocab_size=1000", f"--data_dir={data}"]
  reference = {}
  for name, raw in (("old", old_raw), ("new", new_raw)):
    shutil.rmtree(data, ignore_errors=True)
    done = run(base + [f"--raw_data_dir={raw}"])
    if done.returncode:
      sys.exit(f"datagen failed: {done.stderr[-500:]}")
    reference[name] = state(data)
  old_copy = os.path.join(work, "data.old")
  shutil.rmtree(old_copy, ignore_errors=True)
  shutil.rmtree(data)
  run(base + [f"--raw_data_dir={old_raw}"])
  shutil.copytree(data, old_copy)

  def setup():
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(old_copy, data)
  return (setup, base + [f"--raw_data_dir={new_raw}", "--overwrite"],
          [data], reference["old"], reference["new"])


def import_case(work):
  """The reference run imported into RUN and DATA, which start absent."""
  out, data = os.path.join(work, "imported"), os.path.join(work, "idata")
  command = ["t2t-import", f"--t2t_output_dir={FIXTURES}/tiny",
             f"--t2t_data_dir={FIXTURES}/data", f"--output_dir={out}",
             f"--data_dir={data}"]

  def setup():
    for folder in (out, data):
      shutil.rmtree(folder, ignore_errors=True)
    for name in os.listdir(work):
      if name.startswith((".imported", ".idata")):
        shutil.rmtree(os.path.join(work, name), ignore_errors=True)
  setup()
  done = run(command)
  if done.returncode:
    sys.exit(f"import failed: {done.stderr[-500:]}")
  new = state(out, data)
  return setup, command, [out, data], {}, new


def committed(folders, new):
  """Whether ``folders`` hold a swap whose journal was written and that,
  finished (as the next command does), gives the new state: checked on a
  copy."""
  from t2t_keras.io.staging import StagedFiles, pending
  with tempfile.TemporaryDirectory() as scratch:
    copies = []
    for folder in folders:
      copy = os.path.join(scratch, os.path.basename(folder))
      shutil.copytree(folder, copy, symlinks=True)
      copies.append(copy)
      for stage in pending(copy):
        name = os.path.basename(stage)[1:-len(".staging")]
        StagedFiles(copy, name).recover()
    return state(*copies) == new


def one_kill(setup, command, folders, old, new, delay):
  """What was wrong after a kill at ``delay`` seconds and a rerun, or ''."""
  setup()
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
  time.sleep(delay)
  process.send_signal(signal.SIGKILL)
  process.wait()
  after = state(*[f for f in folders if os.path.isdir(f)])
  killed = ("old" if after == old else "new" if after == new else "mixed")
  if killed == "mixed" and committed(folders, new):
    killed = "new, committed (the next command finishes the swap)"
  if killed == "mixed":
    return killed, f"{len(set(after.items()) ^ set(old.items()))} files " \
        "differ from the old state and from the new"
  done = run(command)
  if done.returncode:
    return killed, f"rerun exit {done.returncode}: {done.stderr[-200:]}"
  if state(*folders) != new:
    return killed, "the rerun did not end with the new state"
  return killed, ""


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--kills", type=int, default=10)
  parser.add_argument("--work_dir", default="/tmp/t2t_kills")
  parser.add_argument("--only", default="")
  parser.add_argument("--seed", type=int, default=1)
  args = parser.parse_args()
  os.makedirs(args.work_dir, exist_ok=True)
  rng = random.Random(args.seed)
  print("| command | kill at (s) | state after the kill | after the rerun |")
  print("| --- | --- | --- | --- |")
  failed = total = 0
  for name, make in (("datagen", datagen_case), ("import", import_case)):
    if args.only not in name:
      continue
    case = make(args.work_dir)
    start = time.time()
    run(case[1])           # an uninterrupted run's time bounds the kills
    case[0]()
    start = time.time()
    run(case[1])
    span = time.time() - start
    for _ in range(args.kills):
      delay = rng.uniform(0.3, span)
      killed, wrong = one_kill(*case, delay)
      failed += bool(wrong)
      total += 1
      print(f"| {name} | {delay:.2f} of {span:.1f} | {killed} | "
            f"{'FAILED: ' + wrong if wrong else 'new, complete'} |",
            flush=True)
  print(f"\n{total - failed} of {total} kills held")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
