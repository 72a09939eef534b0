"""The pieces scripts/hostile_cases.py builds its cases from: the world's
paths, the commands it starts, the checks of what they left, and the ways
of running a command with a signal or a second command beside it."""

import os
import shutil
import signal
import subprocess
import time

TINY = ("hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2,"
        "batch_size=1024,learning_rate_warmup_steps=20")
SOURCE_LINE = "the big red dog sees a small cat near the old house"


def in_dir(h, *names):
  return os.path.join(h["dir"], *names)


def write_file(path, data):
  with open(path, "wb") as f:
    f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
  return path


def count_lines(path):
  with open(path, "rb") as f:
    return f.read().count(b"\n")


def source_file(h, n=20, name="in.txt"):
  return write_file(in_dir(h, name), (SOURCE_LINE + "\n") * n)


def old_output(h):
  return write_file(in_dir(h, "out.txt"), "the user's earlier output\n")


def decoder(h, run=None, data=None, *more):
  return ["t2t-decoder", "--problem=translate_synthetic",
          f"--data_dir={data or h['data']}",
          f"--output_dir={run or h['run']}", *more]


def trainer(h, out, *more):
  return ["t2t-trainer", "--problem=translate_synthetic",
          "--hparams_set=transformer_tiny", f"--hparams={TINY}",
          f"--data_dir={h['data']}", f"--output_dir={out}", "--noeval_bleu",
          *more]


def copy_run(h):
  target = in_dir(h, "run")
  shutil.copytree(h["run"], target)
  return target


def copy_data(h):
  target = in_dir(h, "data")
  shutil.copytree(h["data"], target)
  return target


def same_lines(source, output):
  def check(h, done):
    del done
    got, want = count_lines(in_dir(h, output)), count_lines(in_dir(h, source))
    return "" if got == want else f"{got} output lines for {want} input lines"
  return check


def absent(*names):
  def check(h, done):
    del done
    there = [n for n in names if os.path.exists(in_dir(h, n))]
    return f"{there[0]} was written" if there else ""
  return check


def start(argv):
  return subprocess.Popen(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def finish(process, timeout=600):
  out, err = process.communicate(timeout=timeout)
  return subprocess.CompletedProcess(process.args, process.returncode, out,
                                     err)


def wait_for_file(path, process, timeout=300):
  end = time.time() + timeout
  while time.time() < end and process.poll() is None:
    if os.path.exists(path):
      return True
    time.sleep(0.2)
  return False


def signalled(signum, wait_for):
  """Sends ``signum`` once ``wait_for(h)`` (a path) exists."""
  def during(h, argv):
    process = start(argv)
    wait_for_file(wait_for(h), process)
    time.sleep(1.0)
    process.send_signal(signum)
    return finish(process)
  return during


def second_while_first(first, lock):
  """Runs ``first(h)`` until ``lock(h)`` exists, then the case's command
  beside it; the first is then stopped and its exit checked clean."""
  def during(h, argv):
    one = start(first(h))
    wait_for_file(lock(h), one)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    one.send_signal(signal.SIGTERM)
    first_done = finish(one)
    # Done before the signal came, stopped by it, or ended by it while
    # Python was exiting (its handlers then are the default ones).
    if first_done.returncode not in (0, 143, -15) or "Traceback" in \
        first_done.stderr:
      done.stderr += "\nTraceback (the first command): " + \
          first_done.stderr[-300:]
    return done
  return during


def signal_at_step_100(signum):
  """Sends ``signum`` once the trainer logs step 100 (its log is on
  stdout)."""
  def during(h, argv):
    del h
    process = start(argv)
    seen = ""
    for line in process.stdout:
      seen += line
      if line.startswith("step 100"):
        process.send_signal(signum)
        break
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(argv, process.returncode, seen + out,
                                       err)
  return during


sigint_at_step_100 = signal_at_step_100(signal.SIGINT)
