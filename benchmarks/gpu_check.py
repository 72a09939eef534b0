"""The figures of benchmarks/gpu_check.sh, from what its commands printed.

  python benchmarks/gpu_check.py gpus
      how many GPUs TensorFlow sees, their names and compute capabilities, or
      one line on stderr and exit 2 where it sees none.
  python benchmarks/gpu_check.py mfu SET DATA_DIR TRAINER_LOG PEAK_LOG GPUS NAMES
      the trainer's steady tokens/s (the median of its progress lines after
      the first, which holds the tracing) and its model FLOPs utilization:
      target tokens/s x training FLOPs per target token (matrix products at
      the test split's mean lengths in pieces, t2t_keras.analysis.cost) over
      GPUS x the bfloat16 matmul peak of one GPU (t2t-analyze --matmul_peak:
      chained products on the device, no host copy), and over GPUS x the
      published dense bfloat16 peak where NAMES (the gpus line) names a GPU
      of PUBLISHED.
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Dense bfloat16 tensor-core peaks (TFLOP/s, without sparsity) from NVIDIA's
# data sheets, by the model the device name holds, the most exact first: an
# H100 PCIe card is not an SXM one ("NVIDIA H100 80GB HBM3").
PUBLISHED = (("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H200 NVL", 835.0),
             ("H100", 989.0), ("H200", 989.0), ("A100", 312.0),
             ("L40S", 362.0), ("L4", 121.0))


def published_peak(names):
  """The published bfloat16 peak (TFLOP/s) of the GPU ``names`` names, or
  None."""
  for name, tflops in PUBLISHED:
    if name in names:
      return name, tflops
  return None


def gpus():
  import t2t_keras.bin.quiet_tensorflow  # noqa: F401
  import tensorflow as tf
  from t2t_keras.io import logs
  found = tf.config.list_physical_devices("GPU")
  if not found:
    build = ("built with CUDA" if tf.test.is_built_with_cuda() else
             "not built with CUDA")
    said = logs.native_errors()
    print(f"gpu_check: TensorFlow sees no GPU (this TensorFlow is {build}"
          + (f"; it said: {said[0]}" if said else "") +
          "): nothing to measure", file=sys.stderr)
    return 2
  names = []
  for gpu in found:
    details = tf.config.experimental.get_device_details(gpu)
    cc = details.get("compute_capability")
    names.append(f"{details.get('device_name', gpu.name)}"
                 + (f" (compute capability {cc[0]}.{cc[1]})" if cc else ""))
  print(f"{len(found)} GPU(s): {'; '.join(sorted(set(names)))}")
  return 0


def mean_pieces(data_dir):
  """Mean source and target lengths in pieces (EOS included) of the test
  split, and the vocabulary size."""
  from t2t_keras import registry
  from t2t_keras.decoding.run import split_text
  problem = registry.problem("translate_synthetic").for_data(data_dir)
  _, sources, references = split_text(problem, data_dir, "test")
  lengths = []
  for lines, vocab in ((sources, problem.input_vocab(data_dir)),
                       (references, problem.target_vocab(data_dir))):
    counts = [len(vocab.encode(line)) + 1 for line in lines]
    lengths.append(sum(counts) / len(counts))
  return lengths, problem.input_vocab(data_dir).size


def mfu(hparams_set, data_dir, trainer_log, peak_log, n_gpus, names):
  import t2t_keras.bin.quiet_tensorflow  # noqa: F401
  from t2t_keras import registry
  from t2t_keras.analysis import cost
  from t2t_keras.models.config import TransformerConfig
  with open(trainer_log, encoding="utf-8") as f:
    rates = [float(m.group(1).replace(",", "")) for m in
             re.finditer(r"^step \d+/\d+ .* ([\d,]+) tokens/s", f.read(),
                         re.M)]
  if len(rates) < 2:
    print(f"gpu_check: {trainer_log} has {len(rates)} progress line(s); "
          "2 or more needed", file=sys.stderr)
    return 2
  with open(peak_log, encoding="utf-8") as f:
    peak = float(re.search(r"bfloat16 matmul peak (\d+)", f.read()).group(1))
  (source, target), vocab = mean_pieces(data_dir)
  config = TransformerConfig.from_hparams(registry.hparams(hparams_set))
  per_source, per_target = cost.training_flops(config, (vocab, vocab),
                                               source, target)
  per_token = per_source * source / target + per_target
  rate = statistics.median(rates[1:])
  used = rate * per_token / (int(n_gpus) * peak * 1e9)
  known = published_peak(names)
  print(f"training {hparams_set}: {rate:,.0f} target tokens/s over "
        f"{n_gpus} GPU(s); {per_token / 1e6:.0f} MFLOP per target token "
        f"(mean lengths {source:.1f} -> {target:.1f} pieces); bfloat16 "
        f"matmul peak {peak:,.0f} GFLOP/s a GPU; MFU {used:.1%}" + (
            "" if known is None else
            f"; against the {known[0]}'s published {known[1]:,.0f} TFLOP/s: "
            f"{rate * per_token / (int(n_gpus) * known[1] * 1e12):.1%}"))
  return 0


if __name__ == "__main__":
  if sys.argv[1:2] == ["gpus"]:
    sys.exit(gpus())
  if sys.argv[1:2] == ["mfu"] and len(sys.argv) == 8:
    sys.exit(mfu(*sys.argv[2:]))
  print(__doc__, file=sys.stderr)
  sys.exit(2)
