"""JAX decoding on a CPU with each held layout of the kernels
(``kernels.kernel_layout``: "packed" for ``kernels.rows_product``,
"transposed", Keras's own, and "auto", the one ``layout_probe`` picks),
side by side in one process: the whole
``JaxDecoder.decode`` of ``--lines`` sentences (batching, search, strings),
each layout in turn for ``--rounds`` rounds after an untimed pass that
compiles every shape. A transformer_base-shaped model with random weights
(or ``--output_dir``, a trained run); outputs compared with Keras's layout.
The table gives each layout's median seconds and its speed-up over the
others; the fast path stays only where it gains 3% or more.

  KERAS_BACKEND=jax python benchmarks/jax_layouts.py [--output_dir RUN]
      [--lines 64] [--beam 4] [--rounds 3] [--quick]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


class _Ids:
  """Sentences as space-separated ids (a random model's vocabulary)."""

  def __init__(self, size):
    self.vocab_size = size

  def encode(self, line):
    return [int(t) for t in line.split()]

  def decode(self, ids):
    return " ".join(str(int(i)) for i in ids if i > 1)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--output_dir", default=None)
  parser.add_argument("--lines", type=int, default=64)
  parser.add_argument("--beam", type=int, default=4)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args()
  import keras
  import numpy as np
  from t2t_keras import build_model, registry
  from t2t_keras.analysis.peak import matmul_peaks
  from t2t_keras.decoding.backends.jax_decoder import JaxDecoder
  from t2t_keras.decoding.options import decode_hparams
  if keras.backend.backend() != "jax":
    sys.exit("run it with KERAS_BACKEND=jax")
  vocab_size = 1000 if args.quick else 32000
  hparams = registry.hparams("transformer_base")
  if args.quick:
    hparams.parse("hidden_size=64,filter_size=128,num_hidden_layers=1")
  keras.utils.set_random_seed(1)
  model = build_model(hparams=hparams, vocab_size=vocab_size)
  rng = np.random.RandomState(0)
  lines = [" ".join(str(t) for t in rng.randint(2, vocab_size, size=n))
           for n in rng.randint(8, 30, size=2 if args.quick else args.lines)]
  options = decode_hparams(f"beam_size={args.beam},batch_size="
                           f"{args.batch_size},extra_length=10")
  decoder = JaxDecoder(model, _Ids(vocab_size), options)
  search = decoder._search
  layouts = search.layouts() + ("auto",)   # auto: the probe's choice

  class Forced:
    def __init__(self, layout):
      self.layout = layout

    def __call__(self, inputs, prefixes=None):
      return search(inputs, prefixes, layout=None if self.layout == "auto"
                    else self.layout)

  outputs, seconds = {}, {name: [] for name in layouts}
  for name in layouts:   # untimed: compiles every shape for each layout
    decoder._search = Forced(name)
    outputs[name] = decoder.decode(lines)
  for _ in range(1 if args.quick else args.rounds):
    for name in layouts:
      decoder._search = Forced(name)
      start = time.perf_counter()
      decoder.decode(lines)
      seconds[name].append(time.perf_counter() - start)
  peak = matmul_peaks(1024 if args.quick else 4096)["float32"] / 1e9
  print(f"matmul peak (TensorFlow): float32 {peak:.0f} GFLOP/s")
  print(f"JaxDecoder.decode of {len(lines)} sentences, beam {args.beam}, "
        f"batch {args.batch_size}, {'toy' if args.quick else 'base'} model")
  print(f"auto reads {search.layout(min(len(lines), args.batch_size))!r} "
        "at a full batch")
  print("| layout | median s | vs keras | vs transposed | same outputs as "
        "keras | rounds (s) |")
  print("| --- | --- | --- | --- | --- | --- |")
  median = {n: statistics.median(s) for n, s in seconds.items()}
  for name in layouts:
    print(f"| {name} | {median[name]:.2f} | "
          f"{median['keras'] / median[name]:.3f}x | " + (
              f"{median['transposed'] / median[name]:.3f}x"
              if "transposed" in median else "-") +
          f" | {sum(a == b for a, b in zip(outputs[name], outputs['keras']))}"
          f"/{len(lines)} | {', '.join(f'{s:.2f}' for s in seconds[name])} |")


if __name__ == "__main__":
  main()
