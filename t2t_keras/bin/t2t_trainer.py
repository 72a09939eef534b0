"""t2t-trainer: train a registered model on a registered problem."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import datagen_flags
from t2t_keras.bin import modes
from t2t_keras.training.config import CheckpointPolicy, RunConfig

FLAGS = flags.FLAGS
common.define("problem", "hparams_set", "hparams", "data_dir", "output_dir",
              model=RunConfig.model)
flags.DEFINE_bool("generate_data", False, "Run t2t-datagen first.")
flags.DEFINE_integer("train_steps", None,
                     "Total updates; default: the hparams' train_steps.",
                     lower_bound=1)
flags.DEFINE_integer("eval_steps", None,
                     "Dev batches per evaluation (default: all of dev).",
                     lower_bound=1)
flags.DEFINE_integer("local_eval_frequency", None,
                     "Evaluate on dev every this many steps; 0 or none: at "
                     "the last step only.", lower_bound=0)
flags.DEFINE_integer("keep_checkpoint_max", CheckpointPolicy.keep,
                     "Checkpoints to keep (the paper averages 5 or 20); 0: "
                     "all of them, as TensorFlow's Saver.", lower_bound=0)
flags.DEFINE_integer("save_checkpoints_secs", CheckpointPolicy.every_secs,
                     "Save every this many seconds (the paper: 10 minutes); "
                     "0: never by time.")
flags.DEFINE_integer("save_checkpoints_steps", None,
                     "Save every this many steps as well.")
flags.DEFINE_integer("worker_gpu", None,
                     "GPUs (replicas) to use; 0: none, train on the CPU "
                     "(tensor2tensor's meaning); default: all local GPUs.")
flags.DEFINE_bool("allow_cpu", False,
                  "With --worker_gpu: train on the devices TensorFlow sees "
                  "when it sees fewer GPUs (default: stop with one line).")
flags.DEFINE_float("worker_timeout_secs", RunConfig.worker_timeout_secs,
                   "A multi-worker run ends when another worker has not "
                   "answered for about this long (a paused process, a long "
                   "garbage collection): raise it to wait longer.",
                   lower_bound=1)
flags.DEFINE_integer("cpu_devices", None,
                     "Without GPUs: split the CPU into this many logical "
                     "devices and train one replica on each.")
flags.DEFINE_bool("xla_compile", False,
                  "Compile the training step with XLA (with several "
                  "replicas, each replica's forward and backward pass); "
                  "batches are padded to their length bucket's bound. XLA "
                  "on CPU does not use AMX bfloat16 units.")
flags.DEFINE_bool("eval_bleu", None,
                  "Decode dev and report sacreBLEU at each evaluation; the "
                  "best checkpoint by it goes to OUTPUT_DIR/best (by dev "
                  "loss without it). Default: on for translation problems.")
flags.DEFINE_integer("eval_bleu_lines", None,
                     "Dev sentences decoded for --eval_bleu (default or 0: "
                     "all).")
flags.DEFINE_enum("eval_metric", None, ["bleu", "chrf", "f1"],
                  "What --eval_bleu scores and the best checkpoint follows: "
                  "sacreBLEU's bleu or chrf for translation (default bleu); "
                  "f1 for parsing.")
flags.DEFINE_string("eval_decode_hparams", "",
                    "Decode hparams for --eval_bleu, e.g. 'beam_size=1' "
                    "(default: the problem's decoding settings).")
flags.DEFINE_integer("early_stopping_patience", None,
                     "Stop after this many evaluations without a better dev "
                     "BLEU (or loss); default: never.")
flags.DEFINE_float("train_minutes", None,
                   "Stop the updates once the run has trained this many "
                   "minutes, counted over resumes (fairseq's "
                   "--stop-time-hours); the step reached is checkpointed "
                   "and evaluated. Default: no limit.")
flags.DEFINE_integer("random_seed", RunConfig.seed,
                     "Seed of the initial weights, dropout and data order.")
flags.DEFINE_string("warm_start_from", None,
                    "Start a new run from this run directory's (or "
                    "checkpoint's) model weights: fine-tuning. The model "
                    "shape must match; the vocabulary too, unless "
                    "--warm_start_vocab=map. Ignored once --output_dir has "
                    "a checkpoint (the run resumes).")
flags.DEFINE_bool("warm_start_optimizer", False,
                  "With --warm_start_from, take the source's optimizer "
                  "state and step too (default: fresh, step 0).")
flags.DEFINE_string("warm_start_schedule", RunConfig.warm_start_schedule,
                    "With --warm_start_from: restart (the hparams' "
                    "learning-rate schedule from step 1, warm-up again), "
                    "continue (from the source's last step: no second "
                    "warm-up) or constant=F (a constant rate, F times the "
                    "source's last rate).")
flags.DEFINE_enum("warm_start_vocab", "same", ["same", "map"],
                  "With --warm_start_from: same (the source's vocabulary; "
                  "another is refused) or map (a --data_dir with another "
                  "vocabulary: the rows of pieces both hold are kept, a new "
                  "piece starts from the mean of the rows of the pieces the "
                  "old vocabulary splits it into).")


MODES = modes.Modes("t2t-trainer", exclusive=(
    modes.Mode("when training",
               frozenset({"problem", "hparams_set", "hparams", "data_dir",
                          "output_dir", "model", "generate_data",
                          "train_steps", "eval_steps", "local_eval_frequency",
                          "keep_checkpoint_max", "save_checkpoints_secs",
                          "save_checkpoints_steps", "worker_gpu",
                          "cpu_devices", "xla_compile", "eval_bleu",
                          "worker_timeout_secs",
                          "early_stopping_patience", "train_minutes",
                          "random_seed", "warm_start_from"})),
), additive=(
    modes.Mode("with --generate_data", datagen_flags.NAMES,
               when=lambda f: f.generate_data, example=("--generate_data",)),
    modes.Mode("with validation decoding (--eval_bleu, on by default for "
               "translation and parsing)",
               frozenset({"eval_bleu_lines", "eval_metric",
                          "eval_decode_hparams"}),
               when=lambda f: f.eval_bleu is not False,
               off=("--noeval_bleu",)),
    modes.Mode("with --worker_gpu", frozenset({"allow_cpu"}),
               when=lambda f: f.worker_gpu is not None,
               example=("--worker_gpu=1",)),
    modes.Mode("with --warm_start_from",
               frozenset({"warm_start_optimizer", "warm_start_vocab",
                          "warm_start_schedule"}),
               when=lambda f: f.warm_start_from,
               example=("--warm_start_from=run",)),
))


def main():
  common.require(FLAGS, "problem", "output_dir")
  from t2t_keras.training.run import train
  from t2t_keras.training.run_checks import saved_model_name
  model = FLAGS.model
  if not FLAGS.hparams_set:
    # A run that holds hparams.json and model.json continues with them.
    saved = saved_model_name(FLAGS.output_dir)
    if saved is None:
      common.require(FLAGS, "hparams_set")
    model = model if FLAGS["model"].present else saved
  if FLAGS.generate_data:
    common.require(FLAGS, "data_dir")
    datagen_flags.generate_from_flags(FLAGS.problem, FLAGS.data_dir)
  train(RunConfig(
      problem=FLAGS.problem, hparams_set=FLAGS.hparams_set,
      output_dir=FLAGS.output_dir, data_dir=FLAGS.data_dir, model=model,
      hparams_overrides=FLAGS.hparams, train_steps=FLAGS.train_steps,
      eval_every=FLAGS.local_eval_frequency, eval_steps=FLAGS.eval_steps,
      checkpoints=CheckpointPolicy(
          keep=FLAGS.keep_checkpoint_max or None,
          every_secs=FLAGS.save_checkpoints_secs or None,
          every_steps=FLAGS.save_checkpoints_steps),
      worker_gpu=FLAGS.worker_gpu, allow_cpu=FLAGS.allow_cpu,
      cpu_devices=FLAGS.cpu_devices,
      worker_timeout_secs=FLAGS.worker_timeout_secs,
      jit_compile=FLAGS.xla_compile, seed=FLAGS.random_seed,
      eval_bleu=FLAGS.eval_bleu, eval_bleu_lines=FLAGS.eval_bleu_lines,
      eval_metric=FLAGS.eval_metric,
      eval_decode_overrides=FLAGS.eval_decode_hparams,
      early_stopping_patience=FLAGS.early_stopping_patience,
      train_minutes=FLAGS.train_minutes,
      flags=common.flag_values(FLAGS),
      warm_start_from=FLAGS.warm_start_from,
      warm_start_optimizer=FLAGS.warm_start_optimizer,
      warm_start_vocab=FLAGS.warm_start_vocab,
      warm_start_schedule=FLAGS.warm_start_schedule))
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
