"""t2t-decoder on TensorFlow and on JAX (``KERAS_BACKEND=jax``), a trained
run as a user decodes it, one table:

- a file (``--lines`` of ``--source_file``) and one line through the
  command, wall time from start to exit; JAX with an empty compilation
  cache and again with the cache the first call filled;
- one sentence at a time in a process that keeps the decoder (a server):
  the median of ``--requests`` single-line decodes, each decoded once
  untimed before (``decoding.backends.decoder.Decoder`` /
  ``decoding.backends.jax_decoder.JaxDecoder``).

Every output is compared with TensorFlow's. Run it on an idle machine.

    python benchmarks/decoder_backends.py --output_dir RUN --data_dir DATA \\
      --problem translate_ende --source_file ../shared/data/multi30k/val.en
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

WORKER = """
import json, statistics, sys, time
from t2t_keras import registry
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.models.builder import load_model_from_dir
import keras
args = json.loads(sys.argv[1])
problem = registry.problem(args["problem"]).for_data(args["data_dir"])
model, _, _, _ = load_model_from_dir(args["output_dir"],
                                     activation_dtype=args["dtype"])
hparams = decode_hparams(args["overrides"], problem.decode_defaults)
if keras.backend.backend() == "jax":
  from t2t_keras.decoding.backends.jax_decoder import JaxDecoder as Decoder
  extra = {}
else:
  from t2t_keras.decoding.backends.decoder import Decoder
  extra = dict(fixed_weights=True)
decoder = Decoder(model, problem.input_vocab(args["data_dir"]), hparams,
                  target_vocab=problem.target_vocab(args["data_dir"]),
                  postprocess=problem.postprocess, **extra)
lines = args["lines"]
for line in lines:   # untimed: compiles each shape (JAX), traces (TF)
  decoder.decode([line])
seconds, outputs = [], []
for line in lines:
  start = time.perf_counter()
  outputs += decoder.decode([line])
  seconds.append(time.perf_counter() - start)
print(json.dumps({"median": statistics.median(seconds), "outputs": outputs}))
"""


def command(args, backend, source, target, cache):
  """Seconds of one t2t-decoder call."""
  env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
             JAX_COMPILATION_CACHE_DIR=cache)
  start = time.perf_counter()
  subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_decoder",
       f"--problem={args.problem}", f"--output_dir={args.output_dir}",
       f"--data_dir={args.data_dir}", f"--decode_from_file={source}",
       f"--decode_to_file={target}", f"--activation_dtype={args.dtype}",
       f"--decode_hparams={args.decode_hparams}"],
      check=True, env=env, capture_output=True)
  return time.perf_counter() - start


def served(args, backend, lines):
  env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
  request = dict(problem=args.problem, data_dir=args.data_dir,
                 output_dir=args.output_dir, dtype=args.dtype,
                 overrides=args.decode_hparams, lines=lines)
  done = subprocess.run([sys.executable, "-c", WORKER, json.dumps(request)],
                        check=True, env=env, capture_output=True, text=True)
  return json.loads(done.stdout.strip().splitlines()[-1])


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  for name in ("output_dir", "data_dir", "problem", "source_file"):
    parser.add_argument("--" + name, required=True)
  parser.add_argument("--lines", type=int, default=1000)
  parser.add_argument("--requests", type=int, default=20)
  parser.add_argument("--dtype", default="float32")
  parser.add_argument("--decode_hparams", default="")
  args = parser.parse_args()
  from t2t_keras.analysis.peak import matmul_peaks
  peaks = matmul_peaks(4096)
  with open(args.source_file, encoding="utf-8") as f:
    lines = [line.rstrip("\n") for line in f][:args.lines]
  folder = tempfile.mkdtemp(prefix="decoder_backends_")
  files = {"file": os.path.join(folder, "file.txt"),
           "line": os.path.join(folder, "line.txt")}
  for name, chosen in (("file", lines), ("line", lines[:1])):
    with open(files[name], "w", encoding="utf-8") as f:
      f.write("".join(l + "\n" for l in chosen))
  rows, outputs = {}, {}
  for name in ("file", "line"):
    for backend, cache in (("tensorflow", "cold"), ("jax", "cold"),
                           ("jax", "warm")):
      target = os.path.join(folder, f"{name}.{backend}.{cache}.out")
      what = (f"t2t-decoder, a file of {len(lines)} lines" if name == "file"
              else "t2t-decoder, one line")
      rows.setdefault(what, {})[f"{backend} {cache}"] = command(
                          args, backend, files[name], target,
                          os.path.join(folder, f"cache_{name}"))
      with open(target, encoding="utf-8") as f:
        outputs[(name, backend, cache)] = f.read()
  kept = {b: served(args, b, lines[:args.requests])
          for b in ("tensorflow", "jax")}
  rows["one sentence, a decoder kept in its process (median)"] = {
      "tensorflow cold": kept["tensorflow"]["median"],
      "jax cold": kept["jax"]["median"]}
  same = all(outputs[(n, "tensorflow", "cold")] == outputs[(n, b, c)]
             for n, b, c in outputs) and (kept["tensorflow"]["outputs"] ==
                                          kept["jax"]["outputs"])
  print(f"{os.cpu_count()} CPUs; {args.output_dir}, {args.dtype}, "
        f"decode hparams '{args.decode_hparams}'; matmul peak (4096^3, "
        f"TensorFlow): float32 {peaks['float32'] / 1e9:,.0f}, bfloat16 "
        f"{peaks['bfloat16'] / 1e9:,.0f} GFLOP/s; outputs "
        + ("equal" if same else "DIFFER"))
  print("| whole command, or request | TensorFlow | JAX | JAX, the call "
        "before's compilation cache |")
  print("| --- | --- | --- | --- |")
  for what, cells in rows.items():
    print(f"| {what} | " + " | ".join(
        f"{cells[k]:.3g} s" if k in cells else "-"
        for k in ("tensorflow cold", "jax cold", "jax warm")) + " |")


if __name__ == "__main__":
  main()
