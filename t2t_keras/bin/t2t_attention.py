"""t2t-attention: pictures of a trained model's attention (Figures 3-5)."""

from absl import app
from absl import flags

from t2t_keras.bin import common
# Imported for its side effect: it defines the decoding flags.
from t2t_keras.bin import decode_flags  # noqa: F401  # pylint: disable=unused-import

FLAGS = flags.FLAGS
flags.DEFINE_string("sentence", None, "A source sentence to show.")
common.define("decode_from_file")
flags.DEFINE_string("target", None,
                    "With --sentence: force this target instead of the "
                    "model's translation.")
flags.DEFINE_string("out_dir", None,
                    "Where the PNG files and attention.html go.")


def main():
  common.require(FLAGS, "problem", "output_dir", "data_dir", "out_dir")
  common.refuse(FLAGS, "t2t-attention", "activation_dtype", "hparams_set",
                "model")
  if bool(FLAGS.sentence is not None) == bool(FLAGS.decode_from_file):
    raise app.UsageError("give exactly one of --sentence and "
                           "--decode_from_file")
  if FLAGS.target is not None and FLAGS.sentence is None:
    raise app.UsageError("--target goes with --sentence")
  from t2t_keras.analysis.attention_run import attention_pictures  # pylint: disable=g-import-not-at-top
  from t2t_keras.lines import read_lines  # pylint: disable=g-import-not-at-top
  sources = ([FLAGS.sentence] if FLAGS.sentence is not None
             else read_lines(FLAGS.decode_from_file))
  targets = None if FLAGS.target is None else [FLAGS.target]
  attention_pictures(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir,
                     sources, FLAGS.out_dir, targets=targets,
                     checkpoint_path=FLAGS.checkpoint_path,
                     decode_overrides=FLAGS.decode_hparams)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
