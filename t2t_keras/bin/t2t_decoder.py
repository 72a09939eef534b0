"""t2t-decoder: translate (or parse) lines with a trained model, or score
given translations by forced decoding (--score_file)."""

import contextlib
import os
import sys

from absl import app
from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes
# Imported for its side effect: it defines the decoding flags.
from t2t_keras.bin import decode_flags  # noqa: F401
from t2t_keras.decode_defaults import COMPUTE_TYPES, DEFAULT_WINDOW
from t2t_keras.io import outputs, resume

FLAGS = flags.FLAGS
common.define(xla=False)
common.define("decode_from_file")
flags.DEFINE_string("decode_to_file", None, "Output lines; default stdout.")
flags.DEFINE_enum("decode_split", None, ["dev", "test"],
                  "Decode this split of the problem's data instead of "
                  "--decode_from_file; its sources and references are "
                  "written beside --decode_to_file as .inputs and .targets.")
flags.DEFINE_integer("window_lines", DEFAULT_WINDOW,
                     "Lines read, sorted by length and decoded before their "
                     "outputs are written; bounds memory. Fewer where a pipe "
                     "or terminal pauses: a line written to a kept decoder "
                     "is answered.")
flags.DEFINE_string("saved_model_dir", None,
                    "Decode through this exported SavedModel (a version "
                    "directory from t2t-exporter) instead of a checkpoint.")
flags.DEFINE_string("ct2_model_dir", None,
                    "Decode through this CTranslate2 export (t2t-exporter "
                    "--format=ctranslate2) instead of a checkpoint.")
flags.DEFINE_enum("ct2_compute_type", "float32", list(COMPUTE_TYPES),
                  "CTranslate2's compute type for --ct2_model_dir (int8: "
                  "weights quantized when loaded).")
flags.DEFINE_string("score_file", None,
                    "Score pairs by forced decoding instead of decoding: a "
                    "TSV of source<TAB>target lines, or the sources when "
                    "--score_target_file is given. Writes log-prob<TAB>"
                    "log-prob per token<TAB>tokens, one line per pair.")
flags.DEFINE_string("decode_prefix_file", None,
                    "One target prefix per input line (an empty line for "
                    "none): each output begins with its prefix and the "
                    "search goes on from there (CTranslate2's "
                    "target_prefix).")
flags.DEFINE_bool("decode_prefix_partial", False,
                  "With --decode_prefix_file: the last word of each prefix "
                  "may go on, for interactive completion ('kemi jeba' may "
                  "become 'kemi jebaen'); default: a prefix is whole words "
                  "and the output goes on with a new word after it.")
flags.DEFINE_string("alignment_file", None,
                    "Also write each output's word alignment to this file, "
                    "one line per input line, in Pharaoh format (i-j: "
                    "source word i, target word j, 0-based, words as split "
                    "on spaces), from the encoder-decoder attention.")
flags.DEFINE_string("score_target_file", None,
                    "The targets of --score_file, one line per source line.")


# What each way of decoding reads (``modes``): the first that applies.
CHECKPOINT = frozenset({"problem", "output_dir", "data_dir", "checkpoint_path",
                        "hparams_set", "model", "activation_dtype",
                        "decode_hparams", "decode_to_file", "window_lines"})
MODES = modes.Modes("t2t-decoder", exclusive=(
    modes.Mode("when decoding through --saved_model_dir",
               frozenset({"saved_model_dir", "problem", "data_dir",
                          "decode_from_file", "decode_to_file",
                          "window_lines", "decode_prefix_file"}),
               when=lambda f: f.saved_model_dir,
               why=modes.because(
                   "a SavedModel decodes with the weights, precision and "
                   "decoding settings it was exported with", *CHECKPOINT),
               example=("--saved_model_dir=export/1",)),
    modes.Mode("when decoding through --ct2_model_dir",
               frozenset({"ct2_model_dir", "ct2_compute_type", "problem",
                          "data_dir", "decode_hparams", "decode_from_file",
                          "decode_to_file", "window_lines"}),
               when=lambda f: f.ct2_model_dir,
               why=modes.because(
                   "a CTranslate2 model holds its weights and takes its "
                   "precision from --ct2_compute_type", *CHECKPOINT),
               example=("--ct2_model_dir=ct2",)),
    modes.Mode("when scoring (--score_file)",
               CHECKPOINT | {"score_file", "score_target_file"},
               when=lambda f: f.score_file, example=("--score_file=pairs",)),
    modes.Mode("when decoding a split (--decode_split)",
               CHECKPOINT | {"decode_split", "decode_prefix_file",
                             "alignment_file", "xla"},
               when=lambda f: f.decode_split, example=("--decode_split=dev",)),
    modes.Mode("when decoding through a checkpoint",
               CHECKPOINT | {"decode_from_file", "decode_prefix_file",
                             "alignment_file", "xla"}),
), additive=(
    modes.Mode("with --decode_prefix_file",
               frozenset({"decode_prefix_partial"}),
               when=lambda f: f.decode_prefix_file,
               example=("--decode_prefix_file=prefixes",)),
))


def main():
  if not (FLAGS.saved_model_dir or FLAGS.ct2_model_dir):
    common.require(FLAGS, "problem", "output_dir", "data_dir")
  if FLAGS.decode_split and not FLAGS.decode_to_file:
    raise app.UsageError("--decode_split needs --decode_to_file (its "
                         "sources and references are written beside it)")
  from t2t_keras.decoding import run
  from t2t_keras.decoding.jobs.scoring import paired_lines, tsv_pairs
  from t2t_keras.io.lines import LineReader
  split = FLAGS.decode_split and FLAGS.decode_to_file
  outputs.check_outputs(
      {"decode_to_file": FLAGS.decode_to_file,
       "alignment_file": FLAGS.alignment_file},
      {"decode_from_file": FLAGS.decode_from_file,
       "score_file": FLAGS.score_file,
       "score_target_file": FLAGS.score_target_file,
       "decode_prefix_file": FLAGS.decode_prefix_file,
       "decode_split (.inputs)": split and split + ".inputs",
       "decode_split (.targets)": split and split + ".targets"})
  inputs = FLAGS.decode_from_file
  if FLAGS.decode_split:
    inputs = run.write_split(FLAGS.problem, FLAGS.data_dir, FLAGS.decode_split,
                             FLAGS.decode_to_file)
  paths = [FLAGS.score_file or inputs,
           FLAGS.score_target_file or FLAGS.decode_prefix_file]
  options = dict(checkpoint_path=FLAGS.checkpoint_path,
                 decode_overrides=FLAGS.decode_hparams,
                 hparams_set=FLAGS.hparams_set, model_name=FLAGS.model,
                 activation_dtype=FLAGS.activation_dtype,
                 window=FLAGS.window_lines)
  # Inputs are opened first; the outputs are written under temporary names
  # and take their own only when every line is done. A decode of a file
  # into a file goes on where a stopped or killed one left off.
  with contextlib.ExitStack() as stack:
    opened = [stack.enter_context(open(p, "rb")) if p else None
              for p in paths]
    source = LineReader(opened[0] or sys.stdin.buffer, paths[0] or "stdin")
    prefixes = LineReader(opened[1], paths[1]) if opened[1] else None
    after_window = alignments = None
    if FLAGS.score_file or not resume.can_resume(inputs, FLAGS.decode_to_file):
      target = (stack.enter_context(outputs.output_file(FLAGS.decode_to_file))
                if FLAGS.decode_to_file else sys.stdout.buffer)
      alignments = (stack.enter_context(outputs.output_file(
          FLAGS.alignment_file)) if FLAGS.alignment_file else None)
    else:
      going = stack.enter_context(resume.resumable(
          [p for p in (FLAGS.decode_to_file, FLAGS.alignment_file) if p],
          _resume_key(inputs)))
      target, alignments = (going.streams + [None])[:2]
      after_window = going.window_done
      _skip(going.done, source, prefixes)
    if FLAGS.score_file:
      pairs = (paired_lines(source, LineReader(opened[1], paths[1]))
               if opened[1] else tsv_pairs(source))
      run.score(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir, pairs,
                target, **options)
      return 0
    run.decode(FLAGS.problem, FLAGS.output_dir, FLAGS.data_dir, source,
               target, saved_model_dir=FLAGS.saved_model_dir,
               prefixes=prefixes, alignments=alignments,
               ct2_model_dir=FLAGS.ct2_model_dir,
               ct2_compute_type=FLAGS.ct2_compute_type,
               whole_word_prefixes=not FLAGS.decode_prefix_partial,
               xla=FLAGS.xla, after_window=after_window, **options)
  return 0


# What shapes a decode's output, besides its input and model files: a rerun
# with any of them changed starts over rather than going on.
SHAPING = ("problem", "data_dir", "output_dir", "checkpoint_path",
           "hparams_set", "model", "activation_dtype", "decode_hparams",
           "window_lines", "saved_model_dir", "ct2_model_dir",
           "ct2_compute_type", "decode_split", "decode_prefix_partial",
           "alignment_file", "xla")


def _resume_key(inputs):
  settings = {name: FLAGS[name].value for name in SHAPING}
  settings["env"] = {k: os.environ.get(k) for k in (
      "KERAS_BACKEND", "T2T_KERAS_KERNELS")}
  return resume.run_key(
      settings, inputs=[inputs, FLAGS.decode_prefix_file],
      models=[FLAGS.output_dir, FLAGS.checkpoint_path, FLAGS.saved_model_dir,
              FLAGS.ct2_model_dir])


def _skip(lines, *readers):
  """Reads past the first ``lines`` lines of each reader (those an earlier
  run decoded)."""
  if not lines:
    return
  for reader in readers:
    if reader is not None:
      for _ in zip(range(lines), reader):
        pass
  print(f"going on after line {lines:,}, where a stopped run of the same "
        "command left off", file=sys.stderr, flush=True)


def run():
  common.run(main, modes=MODES, backends=("tensorflow", "jax"))


if __name__ == "__main__":
  run()
