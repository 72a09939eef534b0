"""t2t-trainer: train a registered model on a registered problem."""

from absl import flags

from t2t_keras.bin import common

FLAGS = flags.FLAGS
flags.DEFINE_string("problem", None, "Registered problem name.")
flags.DEFINE_string("model", "transformer", "Registered model name.")
flags.DEFINE_string("hparams_set", None, "Registered hparams set name.")
flags.DEFINE_string("hparams", "", "Overrides, e.g. 'hidden_size=256,pos=emb'.")
flags.DEFINE_string("data_dir", None, "Directory of the problem's data.")
flags.DEFINE_string("output_dir", None, "Checkpoints and hparams.json go here.")
flags.DEFINE_integer("train_steps", None,
                     "Total updates; default: the hparams' train_steps.")
flags.DEFINE_integer("local_eval_frequency", None,
                     "Evaluate on dev every this many steps.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints to keep.")
flags.DEFINE_integer("random_seed", 1234,
                     "Seed of the initial weights, dropout and data order.")


def main(argv):
  if common.setup(argv):
    return 0
  common.require(FLAGS, "problem", "hparams_set", "output_dir")
  from t2t_keras.training.run import train  # pylint: disable=g-import-not-at-top
  train(FLAGS.problem, FLAGS.hparams_set, FLAGS.output_dir,
        train_steps=FLAGS.train_steps, hparams_overrides=FLAGS.hparams,
        model_name=FLAGS.model, data_dir=FLAGS.data_dir,
        eval_every=FLAGS.local_eval_frequency,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max,
        seed=FLAGS.random_seed,
        flags=common.flag_values(FLAGS))
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
