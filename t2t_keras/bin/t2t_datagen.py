"""t2t-datagen: build a problem's vocabulary and TFRecord shards."""

from absl import flags

from t2t_keras.bin import common

FLAGS = flags.FLAGS
flags.DEFINE_string("problem", None, "Registered problem name.")
flags.DEFINE_string("data_dir", None, "Where the vocabulary and shards go.")
flags.DEFINE_string("tmp_dir", None,
                    "Downloads go here (default: <system tmp>/t2t_datagen).")
flags.DEFINE_string("raw_data_dir", None,
                    "Local parallel text instead of a download: "
                    "train.<lang>, dev.<lang>, test.<lang>.")
flags.DEFINE_string("raw_prefixes", "",
                    "Other file prefixes in --raw_data_dir, e.g. "
                    "'train=multi30k/train,dev=wmt14/newstest2013'.")
flags.DEFINE_integer("vocab_byte_budget", 1_000_000,
                     "Bytes of each language's training text sampled to "
                     "build the vocabulary (0: all of it).")
flags.DEFINE_string("source_lang", None, "Source file suffix (translate_local).")
flags.DEFINE_string("target_lang", None, "Target file suffix (translate_local).")
flags.DEFINE_integer("vocab_size", None,
                     "Subword vocabulary size (default: the problem's).")


def main(argv):
  if common.setup(argv):
    return 0
  common.require(FLAGS, "problem", "data_dir")
  from t2t_keras.data.datagen import generate  # pylint: disable=g-import-not-at-top
  generate(FLAGS.problem, FLAGS.data_dir, tmp_dir=FLAGS.tmp_dir,
           raw_dir=FLAGS.raw_data_dir, raw_prefixes=FLAGS.raw_prefixes,
           byte_budget=FLAGS.vocab_byte_budget,
           source_lang=FLAGS.source_lang, target_lang=FLAGS.target_lang,
           vocab_size=FLAGS.vocab_size)
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
