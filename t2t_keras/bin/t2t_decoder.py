"""t2t-decoder: translate (or parse) lines with a trained model."""

import sys

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import decode_flags  # pylint: disable=unused-import
from t2t_keras.decoding.decoder import DEFAULT_WINDOW

FLAGS = flags.FLAGS
flags.DEFINE_string("decode_from_file", None, "Input lines; default stdin.")
flags.DEFINE_string("decode_to_file", None, "Output lines; default stdout.")
flags.DEFINE_integer("window_lines", DEFAULT_WINDOW,
                     "Lines read, sorted by length and decoded before their "
                     "outputs are written; bounds memory.")
flags.DEFINE_string("saved_model_dir", None,
                    "Decode through this exported SavedModel (a version "
                    "directory from t2t-exporter) instead of a checkpoint.")


def main(argv):
  if common.setup(argv):
    return 0
  if not FLAGS.saved_model_dir:
    common.require(FLAGS, "problem", "output_dir", "data_dir")
  from t2t_keras.decoding.run import decode  # pylint: disable=g-import-not-at-top
  from t2t_keras.lines import LineReader  # pylint: disable=g-import-not-at-top
  source = open(FLAGS.decode_from_file, "rb") \
      if FLAGS.decode_from_file else sys.stdin.buffer
  target = open(FLAGS.decode_to_file, "wb") \
      if FLAGS.decode_to_file else sys.stdout.buffer
  try:
    decode(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir,
           LineReader(source, FLAGS.decode_from_file or "stdin"), target,
           checkpoint_path=FLAGS.checkpoint_path,
           decode_overrides=FLAGS.decode_hparams,
           hparams_set=FLAGS.hparams_set, model_name=FLAGS.model,
           saved_model_dir=FLAGS.saved_model_dir, window=FLAGS.window_lines)
  finally:
    for f in (source, target):
      if f not in (sys.stdin.buffer, sys.stdout.buffer):
        f.close()
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
