"""t2t-datagen: build a problem's vocabulary and TFRecord shards."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import datagen_flags
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
common.define("problem", "data_dir")


MODES = modes.Modes("t2t-datagen", exclusive=(
    modes.Mode("when making data",
               datagen_flags.NAMES - {"bpe_dropout_copies"} |
               {"problem", "data_dir"}),
), additive=(
    modes.Mode("with --bpe_dropout", frozenset({"bpe_dropout_copies"}),
               when=lambda f: f.bpe_dropout, example=("--bpe_dropout=0.1",)),
))


def main():
  common.require(FLAGS, "problem", "data_dir")
  datagen_flags.generate_from_flags(FLAGS.problem, FLAGS.data_dir)
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
