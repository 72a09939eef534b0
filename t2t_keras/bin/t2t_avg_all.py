"""t2t-avg-all: average the last N checkpoints of a training run.

``--output_dir`` is the run, as in every other command, and the mean goes
to ``--avg_dir`` (default RUN/avg). tensor2tensor's spelling, ``--model_dir``
for the run and ``--output_dir`` for the mean, is accepted with a note."""

import sys

from absl import app
from absl import flags

from t2t_keras.bin import common

FLAGS = flags.FLAGS
common.define("output_dir")
flags.DEFINE_string("avg_dir", None, "Where the averaged checkpoint goes "
                    "(default: <output_dir>/avg).")
flags.DEFINE_string("model_dir", None, "tensor2tensor's spelling: the run "
                    "(then --output_dir is where the mean goes).")
flags.DEFINE_integer("n", 5, "How many of the last checkpoints to average.")
flags.DEFINE_integer("last_step", None, "Average the last --n checkpoints at "
                     "or before this step (what a run stopped there would "
                     "have averaged; the schedule does not depend on the "
                     "step budget).")


def main():
  run_dir, avg_dir = FLAGS.output_dir, FLAGS.avg_dir
  if FLAGS.model_dir:
    if avg_dir:
      raise app.UsageError("--model_dir (tensor2tensor's spelling) "
                                  "goes with --output_dir, not --avg_dir")
    run_dir, avg_dir = FLAGS.model_dir, FLAGS.output_dir
    print("note: --model_dir=RUN --output_dir=DEST is tensor2tensor's "
          "spelling; here every command's --output_dir is the run: "
          "--output_dir=RUN --avg_dir=DEST", file=sys.stderr)
  if not run_dir:
    raise app.UsageError("missing required flag: --output_dir (the "
                                "run)")
  from t2t_keras.training.average import average_checkpoints  # pylint: disable=g-import-not-at-top
  average_checkpoints(run_dir, avg_dir, FLAGS.n, last_step=FLAGS.last_step)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
