"""What several workers and replicas cost, measured on 127.0.0.1:

- ``saves``: two TF_CONFIG workers train and save; the bytes each worker
  writes per save (the chief: the model checkpoint and its data position;
  another worker: its data position only).
- ``xla``: ``--xla_compile`` with 1, 2 and 4 replicas (``--cpu_devices``):
  XLA's compilations and their summed seconds (TensorFlow's own log of
  each), beside the run's wall time with and without XLA. TensorFlow keeps
  its compiled programs in each device's resource manager, so each replica
  compiles its own.

    python benchmarks/cluster_costs.py [--parts saves,xla]
        [--hparams_set transformer_tiny] [--hparams ...]

Prints the float32 matmul peak beside the seconds.
"""

import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from t2t_keras.analysis.peak import peak_report

SMALL = "hidden_size=32,filter_size=64,num_hidden_layers=1,max_length=16"
COMPILED = re.compile(r"Compiled (\S+) \d+ times, compile time: (\d+) us")


def _port():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _trainer(args, out, steps, *extra):
  return [sys.executable, "-m", "t2t_keras.bin.t2t_trainer",
          "--problem=copy_sequence", f"--hparams_set={args.hparams_set}",
          f"--hparams={args.hparams}", f"--train_steps={steps}",
          "--eval_steps=1", "--local_eval_frequency=0",
          f"--output_dir={out}", *extra]


def saves(args, work):
  """Bytes a save writes, per worker, after a two-worker run saving every
  2 updates."""
  out = os.path.join(work, "saves")
  ports = [_port(), _port()]
  cluster = {"chief": [f"127.0.0.1:{ports[0]}"],
             "worker": [f"127.0.0.1:{ports[1]}"]}
  processes = []
  for kind in ("chief", "worker"):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": kind, "index": 0}}))
    processes.append(subprocess.Popen(
        _trainer(args, out, 4, "--save_checkpoints_steps=2"), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
  for p in processes:
    _, err = p.communicate()
    if p.returncode:
      raise SystemExit(err[-2000:])
  print("| worker | files written per save | bytes per save |")
  print("| --- | --- | --- |")
  for rank, who in enumerate(("chief", "worker 1")):
    own = [f for f in glob.glob(os.path.join(out, "**", "*-4.*"),
                                recursive=True)
           if (f"pipeline-{rank}-of-2" in f) or
           (rank == 0 and "pipeline-" not in f)]
    print(f"| {who} | {len(own)} | {sum(map(os.path.getsize, own)):,} |")
  leftovers = glob.glob(os.path.join(out, "workertemp_*"))
  print(f"workertemp_* folders left: {len(leftovers)}")


def xla(args, work):
  """Compilations and their time with 1, 2 and 4 replicas."""
  print("| replicas | XLA compilations | compile s (summed) | run s with XLA "
        "| run s without |")
  print("| --- | --- | --- | --- | --- |")
  for devices in (1, 2, 4):
    row = []
    for jit in (True, False):
      out = os.path.join(work, f"xla-{devices}-{jit}")
      env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0",
                 TF_CPP_VMODULE="device_compilation_profiler=1")
      command = _trainer(args, out, args.steps, f"--cpu_devices={devices}",
                         *(["--xla_compile"] if jit else []))
      start = time.perf_counter()
      done = subprocess.run(command, env=env, capture_output=True,
                            text=True, check=False)
      seconds = time.perf_counter() - start
      if done.returncode:
        raise SystemExit(done.stderr[-2000:])
      if jit:
        found = COMPILED.findall(done.stderr)
        row += [len(found), sum(int(us) for _, us in found) / 1e6]
      row.append(seconds)
    print(f"| {devices} | {row[0]} | {row[1]:.1f} | {row[2]:.1f} | "
          f"{row[3]:.1f} |")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--parts", default="saves,xla")
  parser.add_argument("--hparams_set", default="transformer_tiny")
  parser.add_argument("--hparams", default=SMALL + ",batch_size=320")
  parser.add_argument("--steps", type=int, default=20)
  args = parser.parse_args()
  print(peak_report())
  work = tempfile.mkdtemp(prefix="cluster_costs.")
  for part in args.parts.split(","):
    {"saves": saves, "xla": xla}[part](args, work)


if __name__ == "__main__":
  main()
