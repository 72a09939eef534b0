"""t2t-exporter: write a SavedModel for TF Serving (strings in, strings out)."""

from absl import flags

from t2t_keras.bin import common

FLAGS = flags.FLAGS
flags.DEFINE_string("problem", None, "Registered problem name.")
flags.DEFINE_string("output_dir", None, "The t2t-trainer --output_dir.")
flags.DEFINE_string("data_dir", None, "The problem's data (vocabulary).")
flags.DEFINE_string("checkpoint_path", None,
                    "A checkpoint, or a directory whose latest to use "
                    "(e.g. <output_dir>/avg); default: the latest in "
                    "--output_dir.")
flags.DEFINE_string("decode_hparams", "",
                    "Fixed in the export, e.g. 'beam_size=4,alpha=0.6'.")
flags.DEFINE_string("export_dir", None,
                    "Where versions go (default <output_dir>/export).")
flags.DEFINE_integer("export_version", None,
                     "The version number (default: seconds since the epoch).")
flags.DEFINE_string("hparams_set", None, "Accepted for compatibility.")
flags.DEFINE_string("model", None, "Accepted for compatibility.")


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
