"""t2t-attention: pictures of a trained model's attention (Figures 3-5)."""

from absl import app
from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes
# Imported for its side effect: it defines the decoding flags.
from t2t_keras.bin import decode_flags  # noqa: F401

FLAGS = flags.FLAGS
flags.DEFINE_string("sentence", None, "A source sentence to show.")
common.define("decode_from_file")
flags.DEFINE_string("target", None,
                    "With --sentence: force this target instead of the "
                    "model's translation.")
flags.DEFINE_string("out_dir", None,
                    "Where the PNG files and attention.html go.")


PICTURES = frozenset({"problem", "output_dir", "data_dir", "out_dir",
                      "checkpoint_path", "decode_hparams"})
WHY = modes.because("it loads the run as its model.json records it, in "
                    "float32", "hparams_set", "model", "activation_dtype")
MODES = modes.Modes("t2t-attention", exclusive=(
    modes.Mode("with --sentence", PICTURES | {"sentence", "target"},
               when=lambda f: f.sentence is not None, why=WHY,
               example=("--sentence=a b",)),
    modes.Mode("with --decode_from_file", PICTURES | {"decode_from_file"},
               why=WHY),
))


def main():
  common.require(FLAGS, "problem", "output_dir", "data_dir", "out_dir")
  if bool(FLAGS.sentence is not None) == bool(FLAGS.decode_from_file):
    raise app.UsageError("give exactly one of --sentence and "
                           "--decode_from_file")
  from t2t_keras.analysis.attention_run import attention_pictures
  from t2t_keras.io.lines import read_lines
  sources = ([FLAGS.sentence] if FLAGS.sentence is not None
             else read_lines(FLAGS.decode_from_file))
  targets = None if FLAGS.target is None else [FLAGS.target]
  attention_pictures(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir,
                     sources, FLAGS.out_dir, targets=targets,
                     checkpoint_path=FLAGS.checkpoint_path,
                     decode_overrides=FLAGS.decode_hparams)
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
