"""t2t-import: a tensor2tensor ``transformer`` run -> a t2t_keras run.

    t2t-import --t2t_output_dir=T2T_RUN --t2t_data_dir=T2T_DATA \\
        --output_dir=RUN --data_dir=DATA

reads T2T_RUN's hparams.json, flags and newest checkpoint (or
--checkpoint_path) and T2T_DATA's SubwordTextEncoder vocabulary, and
writes RUN and DATA, which every command reads with
``--problem=t2t_import`` (docs/coming_from_tensor2tensor.md)."""

import shlex

from absl import app
from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
common.define("output_dir", "data_dir")
flags.DEFINE_string("t2t_output_dir", None, "The tensor2tensor run: its "
                    "t2t-trainer --output_dir (hparams.json, flags.txt, "
                    "checkpoints).")
flags.DEFINE_string("t2t_data_dir", None, "The run's tensor2tensor "
                    "--data_dir: its vocab.*.subwords and TFRecord shards, "
                    "which training on RUN reads as they are.")
flags.DEFINE_string("checkpoint_path", None, "A checkpoint of the run to "
                    "import instead of its newest.")
flags.DEFINE_string("vocab_file", None, "The run's vocabulary, where "
                    "--t2t_data_dir holds several (with --target_vocab_file:"
                    " the source side's).")
flags.DEFINE_string("target_vocab_file", None, "The target side's "
                    "vocabulary of a run with one a side (tensor2tensor's "
                    "vocab.NAME.subwords.LANG), where t2t-import cannot tell "
                    "the sides apart by the embeddings' sizes.")
flags.DEFINE_string("t2t_problem", None, "The run's tensor2tensor problem "
                    "(its --problem), for a run folder without flags.txt.")
flags.DEFINE_integer("target_space_id", 0, "The problem's target_space_id "
                     "(tensor2tensor's translation problems: 0, GENERIC); "
                     "its row of target_space_embedding is added to every "
                     "input.", lower_bound=0, upper_bound=31)

MODES = modes.Modes("t2t-import", exclusive=(
    modes.Mode("importing a run", frozenset({
        "t2t_output_dir", "t2t_data_dir", "output_dir", "data_dir",
        "checkpoint_path", "vocab_file", "target_vocab_file",
        "t2t_problem", "target_space_id"})),))


def main():
  for name in ("t2t_output_dir", "output_dir", "data_dir"):
    if not FLAGS[name].value:
      raise app.UsageError(f"missing required flag: --{name}")
  from t2t_keras.t2t_import.importer import import_run, overrides
  import_run(FLAGS.t2t_output_dir, FLAGS.t2t_data_dir, FLAGS.output_dir,
             FLAGS.data_dir, FLAGS.checkpoint_path, FLAGS.target_space_id,
             FLAGS.vocab_file, target_vocab_file=FLAGS.target_vocab_file,
             problem=FLAGS.t2t_problem)
  run, data = shlex.quote(FLAGS.output_dir), shlex.quote(FLAGS.data_dir)
  common_flags = f"--problem=t2t_import --data_dir={data} --output_dir={run}"
  print("decode:   t2t-decoder " + common_flags + " < source.txt\n"
        "export:   t2t-exporter " + common_flags + " --export_dir=EXPORT\n"
        "continue: t2t-trainer " + common_flags + " --train_steps=N\n"
        "fine-tune into a new run: t2t-trainer --problem=t2t_import "
        f"--data_dir={data} --output_dir=NEW --model=transformer_t2t "
        "--hparams_set=transformer_t2t --hparams="
        f"{shlex.quote(overrides(FLAGS.output_dir))} --warm_start_from={run}",
        flush=True)
  return 0


def run():
  common.run(main, modes=MODES)


if __name__ == "__main__":
  run()
