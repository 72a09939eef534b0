"""t2t-exporter: write a SavedModel for TF Serving (strings in, strings out),
or a CTranslate2 model (--format=ctranslate2)."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes
# Imported for its side effect: it defines the decoding flags.
from t2t_keras.bin import decode_flags  # noqa: F401

FLAGS = flags.FLAGS
common.define(xla=False)
flags.DEFINE_enum("format", "savedmodel", ["savedmodel", "ctranslate2"],
                  "savedmodel: for TF Serving; ctranslate2: a CTranslate2 "
                  "model directory for t2t-decoder --ct2_model_dir.")
flags.DEFINE_string("export_dir", None,
                    "Where versions go (default <output_dir>/export); with "
                    "--format=ctranslate2, the model directory (default "
                    "<output_dir>/ctranslate2).")
flags.DEFINE_integer("export_version", None,
                     "The version number (default: seconds since the epoch).")


SAVED_MODEL = frozenset({"problem", "output_dir", "data_dir", "checkpoint_path",
                         "hparams_set", "model", "decode_hparams", "format",
                         "export_dir", "export_version", "activation_dtype",
                         "xla"})
MODES = modes.Modes("t2t-exporter", exclusive=(
    modes.Mode("with --format=ctranslate2",
               SAVED_MODEL - {"export_version", "activation_dtype", "xla"},
               when=lambda f: f.format == "ctranslate2",
               why={"export_version": "a CTranslate2 model directory has "
                    "no versions",
                    "activation_dtype": "a CTranslate2 model takes its "
                    "precision from t2t-decoder --ct2_compute_type",
                    "xla": "CTranslate2 runs its own kernels"},
               example=("--format=ctranslate2",)),
    modes.Mode("with --format=savedmodel", SAVED_MODEL),
))


def main():
  common.require(FLAGS, "problem", "output_dir", "data_dir")
  from t2t_keras.export.run import export_run
  export_run(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir,
             checkpoint_path=FLAGS.checkpoint_path,
             decode_overrides=FLAGS.decode_hparams,
             export_dir=FLAGS.export_dir, version=FLAGS.export_version,
             export_format=FLAGS.format,
             activation_dtype=FLAGS.activation_dtype,
             hparams_set=FLAGS.hparams_set, model_name=FLAGS.model,
             xla=FLAGS.xla)
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
