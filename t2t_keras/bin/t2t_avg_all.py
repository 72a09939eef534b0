"""t2t-avg-all: average the last N checkpoints of a training run."""

from absl import flags

from t2t_keras.bin import common

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "The t2t-trainer --output_dir.")
flags.DEFINE_string("output_dir", None,
                    "Where the averaged checkpoint goes (default: "
                    "<model_dir>/avg).")
flags.DEFINE_integer("n", 5, "How many of the last checkpoints to average.")


def main(argv):
  if common.setup(argv):
    return 0
  common.require(FLAGS, "model_dir")
  from t2t_keras.training.average import average_checkpoints  # pylint: disable=g-import-not-at-top
  average_checkpoints(FLAGS.model_dir, FLAGS.output_dir, FLAGS.n)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
