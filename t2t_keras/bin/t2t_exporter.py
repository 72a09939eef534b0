"""t2t-exporter: write a SavedModel for TF Serving (strings in, strings out)."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import decode_flags  # pylint: disable=unused-import

FLAGS = flags.FLAGS
flags.DEFINE_string("export_dir", None,
                    "Where versions go (default <output_dir>/export).")
flags.DEFINE_integer("export_version", None,
                     "The version number (default: seconds since the epoch).")


def main(argv):
  if common.setup(argv):
    return 0
  common.require(FLAGS, "problem", "output_dir", "data_dir")
  from t2t_keras.export.run import export_run  # pylint: disable=g-import-not-at-top
  export_run(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir,
             checkpoint_path=FLAGS.checkpoint_path,
             decode_overrides=FLAGS.decode_hparams,
             export_dir=FLAGS.export_dir, version=FLAGS.export_version)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
