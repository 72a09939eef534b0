"""t2t-avg-all: average the last N checkpoints of a training run, or
(--interpolate=ALPHA) blend a fine-tuned run with the weights it started
from.

``--output_dir`` is the run, as in every other command, and the mean goes
to ``--avg_dir`` (default RUN/avg). tensor2tensor's spelling, ``--model_dir``
for the run and ``--output_dir`` for the mean, is accepted with a note."""

import sys

from absl import app
from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
common.define("output_dir")
flags.DEFINE_string("avg_dir", None, "Where the averaged checkpoint goes "
                    "(default: <output_dir>/avg).")
flags.DEFINE_string("model_dir", None, "tensor2tensor's spelling: the run "
                    "(then --output_dir is where the mean goes).")
flags.DEFINE_integer("n", 5, "How many of the last checkpoints to average.")
flags.DEFINE_float("interpolate", None, "A fine-tuned run (--warm_start_from"
                   "): write alpha x its best checkpoint + (1 - alpha) x "
                   "the weights it started from (to --avg_dir, default "
                   "<output_dir>/interpolated): 1 the fine-tuned model, 0 "
                   "its start; what it forgot comes back as alpha falls.")
flags.DEFINE_integer("last_step", None, "Average the last --n checkpoints at "
                     "or before this step (what a run stopped there would "
                     "have averaged; the schedule does not depend on the "
                     "step budget).")


MODES = modes.Modes("t2t-avg-all", exclusive=(
    modes.Mode("with --model_dir (tensor2tensor's spelling)",
               frozenset({"model_dir", "output_dir", "n", "last_step"}),
               when=lambda f: f.model_dir,
               why={"avg_dir": "--output_dir is where the mean goes"},
               example=("--model_dir=run",)),
    modes.Mode("with --interpolate", frozenset({"output_dir", "avg_dir",
                                                "interpolate"}),
               when=lambda f: f.interpolate is not None,
               why={"n": "--interpolate blends the best checkpoint with "
                    "the run's start", "last_step": "--interpolate blends "
                    "the best checkpoint with the run's start",
                    "model_dir": "--output_dir is the run"},
               example=("--interpolate=0.5",)),
    modes.Mode("with --output_dir as the run",
               frozenset({"output_dir", "avg_dir", "n", "last_step"})),
))


def main():
  run_dir, avg_dir = FLAGS.output_dir, FLAGS.avg_dir
  if FLAGS.model_dir:
    run_dir, avg_dir = FLAGS.model_dir, FLAGS.output_dir
    print("note: --model_dir=RUN --output_dir=DEST is tensor2tensor's "
          "spelling; here every command's --output_dir is the run: "
          "--output_dir=RUN --avg_dir=DEST", file=sys.stderr)
  if not run_dir:
    raise app.UsageError("missing required flag: --output_dir (the "
                                "run)")
  if FLAGS.interpolate is not None:
    from t2t_keras.training.interpolate import interpolate_with_start
    interpolate_with_start(run_dir, FLAGS.interpolate, avg_dir)
    return 0
  from t2t_keras.training.average import average_checkpoints
  average_checkpoints(run_dir, avg_dir, FLAGS.n, last_step=FLAGS.last_step)
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
