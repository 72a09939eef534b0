"""t2t-analyze: parameters, FLOPs and training cost of an hparams set
(the paper's Tables 1-3), counted from the shapes; nothing is trained.
With --matmul_peak: this machine's measured matmul peak instead, and a
training budget scaled by it (what the recipes print first)."""

import json

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
common.define("hparams_set", "hparams", "vocab_size", model="transformer")
flags.DEFINE_integer("target_vocab_size", None,
                     "Target vocabulary size when it differs.")
flags.DEFINE_integer("source_length", 25, "Source tokens per sentence.")
flags.DEFINE_integer("target_length", 25, "Target tokens per sentence.")
flags.DEFINE_integer("batch_tokens", 25000,
                     "Source tokens per training step (as many target "
                     "tokens; the paper: about 25,000 each).")
flags.DEFINE_integer("steps", None, "Training steps (default: the paper's, "
                     "100,000 for base and 300,000 for big).")
flags.DEFINE_integer("devices", 8, "Devices for the days estimate.")
flags.DEFINE_float("device_tflops", 9.5,
                   "Sustained TFLOPS per device (the paper: 9.5 for P100).")
flags.DEFINE_integer("kernel_width", 3, "k of Table 1's convolutions.")
flags.DEFINE_integer("neighborhood", None,
                     "r of Table 1's restricted self-attention "
                     "(default: k).")
flags.DEFINE_bool("json", False, "Print JSON instead of tables.")
flags.DEFINE_bool("matmul_peak", False,
                  "Measure this machine's float32 and bfloat16 matmul peaks "
                  "(no hparams set needed) and print them.")
flags.DEFINE_integer("matmul_size", 4096,
                     "With --matmul_peak: the side of the square product.")
flags.DEFINE_float("budget_minutes", None,
                   "With --matmul_peak: a budget in minutes on a machine of "
                   "--reference_gflops, printed scaled to this one.")
flags.DEFINE_float("reference_gflops", 433.0,
                   "The float32 matmul peak (GFLOP/s) --budget_minutes is "
                   "stated for (the recipes': 433).")


MODES = modes.Modes("t2t-analyze", exclusive=(
    modes.Mode("with --matmul_peak",
               frozenset({"matmul_peak", "matmul_size", "budget_minutes",
                          "reference_gflops"}),
               when=lambda f: f.matmul_peak,
               example=("--matmul_peak",)),
    modes.Mode("when counting an hparams set",
               frozenset({"hparams_set", "hparams", "vocab_size", "model",
                          "target_vocab_size", "source_length",
                          "target_length", "batch_tokens", "steps", "devices",
                          "device_tflops", "kernel_width", "neighborhood",
                          "json"})),
))


def main():
  if FLAGS.matmul_peak:
    from t2t_keras.analysis.peak import peak_report
    print(peak_report(FLAGS.budget_minutes, FLAGS.reference_gflops,
                      FLAGS.matmul_size))
    return 0
  common.require(FLAGS, "hparams_set", "vocab_size")
  from t2t_keras.analysis.analyze_run import analyze, format_report
  report = analyze(FLAGS.hparams_set, FLAGS.vocab_size, FLAGS.hparams,
                   model=FLAGS.model,
                   target_vocab_size=FLAGS.target_vocab_size,
                   source_length=FLAGS.source_length,
                   target_length=FLAGS.target_length,
                   batch_tokens=FLAGS.batch_tokens, steps=FLAGS.steps,
                   devices=FLAGS.devices, device_tflops=FLAGS.device_tflops,
                   kernel_width=FLAGS.kernel_width,
                   neighborhood=FLAGS.neighborhood)
  print(json.dumps(report, indent=2) if FLAGS.json else format_report(report))
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
