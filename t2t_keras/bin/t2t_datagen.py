"""t2t-datagen: build a problem's vocabulary and TFRecord shards."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import datagen_flags

FLAGS = flags.FLAGS
common.define("problem", "data_dir")


def main():
  common.require(FLAGS, "problem", "data_dir")
  datagen_flags.generate_from_flags(FLAGS.problem, FLAGS.data_dir)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
