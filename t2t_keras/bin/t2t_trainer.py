"""t2t-trainer: train a registered model on a registered problem."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import datagen_flags

FLAGS = flags.FLAGS
flags.DEFINE_string("problem", None, "Registered problem name.")
flags.DEFINE_string("model", "transformer", "Registered model name.")
flags.DEFINE_string("hparams_set", None, "Registered hparams set name.")
flags.DEFINE_string("hparams", "", "Overrides, e.g. 'hidden_size=256,pos=emb'.")
flags.DEFINE_string("data_dir", None, "Directory of the problem's data.")
flags.DEFINE_string("output_dir", None, "Checkpoints and hparams.json go here.")
flags.DEFINE_bool("generate_data", False, "Run t2t-datagen first.")
flags.DEFINE_integer("train_steps", None,
                     "Total updates; default: the hparams' train_steps.")
flags.DEFINE_integer("eval_steps", None,
                     "Dev batches per evaluation (default: all of dev).")
flags.DEFINE_integer("local_eval_frequency", None,
                     "Evaluate on dev every this many steps.")
flags.DEFINE_integer("keep_checkpoint_max", 20,
                     "Checkpoints to keep (the paper averages 5 or 20).")
flags.DEFINE_integer("save_checkpoints_secs", 600,
                     "Save every this many seconds (the paper: 10 minutes); "
                     "0: never by time.")
flags.DEFINE_integer("save_checkpoints_steps", None,
                     "Save every this many steps as well.")
flags.DEFINE_integer("worker_gpu", None,
                     "GPUs (replicas) to use; default: all local GPUs.")
flags.DEFINE_integer("cpu_devices", None,
                     "Without GPUs: split the CPU into this many logical "
                     "devices and train one replica on each.")
flags.DEFINE_bool("xla_compile", False,
                  "Compile the training step with XLA (not with several CPU "
                  "replicas; XLA on CPU does not use AMX bfloat16 units).")
flags.DEFINE_integer("random_seed", 1234,
                     "Seed of the initial weights, dropout and data order.")


def main(argv):
  if common.setup(argv):
    return 0
  common.require(FLAGS, "problem", "hparams_set", "output_dir")
  if FLAGS.generate_data:
    common.require(FLAGS, "data_dir")
    datagen_flags.generate_from_flags(FLAGS.problem, FLAGS.data_dir)
  from t2t_keras.training.run import train  # pylint: disable=g-import-not-at-top
  train(FLAGS.problem, FLAGS.hparams_set, FLAGS.output_dir,
        train_steps=FLAGS.train_steps, hparams_overrides=FLAGS.hparams,
        model_name=FLAGS.model, data_dir=FLAGS.data_dir,
        eval_every=FLAGS.local_eval_frequency, eval_steps=FLAGS.eval_steps,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        save_checkpoints_secs=FLAGS.save_checkpoints_secs or None,
        worker_gpu=FLAGS.worker_gpu, cpu_devices=FLAGS.cpu_devices,
        jit_compile=FLAGS.xla_compile, seed=FLAGS.random_seed,
        flags=common.flag_values(FLAGS))
  return 0


def run():
  common.run(main)


if __name__ == "__main__":
  run()
