"""Flags of the commands that load a trained run: t2t-decoder, t2t-exporter."""

from absl import flags

from t2t_keras.bin import common

common.define("problem", "output_dir", "data_dir", "hparams_set", "model")
flags.DEFINE_string("checkpoint_path", None,
                    "A checkpoint, or a directory whose latest checkpoint to "
                    "use (e.g. <output_dir>/avg); default: the latest in "
                    "--output_dir. t2t-decoder: several, comma-separated "
                    "(A,B,...), decode as an ensemble (the mean of their "
                    "probabilities at every step).")
flags.DEFINE_string("decode_hparams", "",
                    "e.g. 'beam_size=4,alpha=0.6,extra_length=50,"
                    "batch_size=32,return_beams=false'.")
flags.DEFINE_enum("activation_dtype", None, ["float32", "bfloat16", "float16"],
                  "What the model computes in (weights stay float32); "
                  "default: the run's activation_dtype hparam, as it "
                  "trained.")
