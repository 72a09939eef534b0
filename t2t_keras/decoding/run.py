"""What t2t-decoder runs."""

import sys

import keras

from t2t_keras import registry
from t2t_keras.decode_defaults import DEFAULT_WINDOW
from t2t_keras.data.vocab_check import check_run_vocab
from t2t_keras.decoding.jobs.alignments import Aligner
from t2t_keras.decoding.backends.ct2 import Ct2Decoder
from t2t_keras.decoding.splits import split_text
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import (decode_hparams, describe,
                                        describe_precision, sentences_a_batch)
from t2t_keras.decoding.backends.saved_model import SavedModelDecoder
from t2t_keras.decoding.jobs.scoring import Scorer, score_stream
from t2t_keras.decoding.stream import decode_stream
from t2t_keras.errors import UserError
from t2t_keras.io.cache import keep_jax_programs
from t2t_keras.io.lines import one_line
from t2t_keras.models.builder import check_trained_with, load_models
from t2t_keras.models.prepared import round_weights
from t2t_keras.io.outputs import output_file


def _to_stderr(message):
  print(message, file=sys.stderr, flush=True)


def _load(problem_name, model_dir, data_dir, checkpoint_path, hparams_set,
          model_name, activation_dtype):
  """(problem, (input vocab, target vocab), model, checkpoint path)."""
  problem = registry.problem(problem_name).for_data(data_dir)
  vocabs = problem.input_vocab(data_dir), problem.target_vocab(data_dir)
  check_run_vocab(vocabs, data_dir, model_dir, checkpoint_path)
  model, _, spec, path = load_models(model_dir, checkpoint_path,
                                     activation_dtype)
  check_trained_with(spec, model_dir, hparams_set, model_name)
  return problem, vocabs, model, path


def write_split(problem_name, data_dir, split, prefix, log=_to_stderr):
  """Writes a split of the problem's data as text, as tensor2tensor's
  --decode_from_dataset did: the sources to ``<prefix>.inputs`` and the
  references to ``<prefix>.targets``, one line each. Returns the inputs'
  path."""
  _, sources, references = split_text(
      registry.problem(problem_name).for_data(data_dir), data_dir, split)
  for suffix, lines in (("inputs", sources), ("targets", references)):
    with output_file(f"{prefix}.{suffix}") as f:
      f.write("".join(one_line(l) + "\n" for l in lines).encode("utf-8"))
  log(f"{split}: {len(sources):,} sentence pairs written to {prefix}.inputs "
      f"and {prefix}.targets")
  return f"{prefix}.inputs"


def score(problem_name, model_dir, data_dir, pairs, target,
          checkpoint_path=None, decode_overrides="", hparams_set=None,
          model_name=None, activation_dtype=None, window=DEFAULT_WINDOW,
          log=_to_stderr):
  """Writes one ``log-prob<TAB>per token<TAB>tokens`` line per (source,
  target) pair of the iterable ``pairs`` into the binary stream
  ``target`` (forced decoding, ``decoding.jobs.scoring``), computing in
  ``activation_dtype`` (default: as the run trained). Returns the number
  of lines written."""
  if keras.backend.backend() != "tensorflow":
    raise UserError("scoring (--score_file) runs on TensorFlow: unset "
                    "KERAS_BACKEND")
  problem, vocabs, model, path = _load(problem_name, model_dir, data_dir,
                                       checkpoint_path, hparams_set,
                                       model_name, activation_dtype)
  hparams = decode_hparams(decode_overrides, problem.decode_defaults)
  round_weights(model, hparams.weights)
  log(f"scoring with {path} in {describe_precision(model, hparams)}")
  scorer = Scorer(model, vocabs[0], vocabs[1],
                  max_input_length=hparams.max_input_length,
                  batch_size=sentences_a_batch(hparams),
                  constraint=problem.decode_constraint(data_dir),
                  extra_length=hparams.extra_length)
  return score_stream(scorer, pairs, target, window, log=log)


def decode(problem_name, model_dir, data_dir, source, target,
           checkpoint_path=None, decode_overrides="", hparams_set=None,
           model_name=None, saved_model_dir=None, ct2_model_dir=None,
           ct2_compute_type="float32", activation_dtype=None,
           window=DEFAULT_WINDOW, prefixes=None, alignments=None,
           whole_word_prefixes=True, xla=False, after_window=None,
           log=_to_stderr):
  """Decodes the lines of ``source`` (a ``lines.LineReader``) into the
  binary stream ``target`` with the run in ``model_dir`` (computing in
  ``activation_dtype``, default: as it trained), the SavedModel in
  ``saved_model_dir`` (its decode hparams are fixed) or the CTranslate2
  export in ``ct2_model_dir`` (its decode hparams, then
  ``decode_overrides``), ``window`` lines at a time; progress goes to
  ``log`` (stderr: stdout may be the output). ``prefixes``: a LineReader
  of one target prefix per input line, forced at each output's start and
  followed by a new word (``whole_word_prefixes=False``: its last word may
  go on); ``xla``: the search compiled with XLA (checkpoints only);
  under ``KERAS_BACKEND=jax`` a checkpoint decodes through
  ``jax_decoder.JaxDecoder`` (its programs kept: ``keep_jax_programs``);
  ``alignments``, a binary stream for each output's word alignment
  (Pharaoh format, ``decoding.jobs.alignments``); ``after_window(n)``, called
  after each window of ``n`` lines is written (``io.resume``). Returns the
  number of lines written."""
  if alignments is not None and (saved_model_dir or ct2_model_dir):
    raise UserError("word alignments come from a checkpoint's attention, "
                    "not from an export")
  if ct2_model_dir and prefixes is not None:
    raise UserError("target prefixes decode through a checkpoint or a "
                    "SavedModel, not the CTranslate2 export")
  if saved_model_dir:
    problem = (registry.problem(problem_name).for_data(data_dir)
               if problem_name else None)
    decoder = SavedModelDecoder(
        saved_model_dir, postprocess=problem and problem.postprocess,
        repaired=problem and problem.repairs and problem.repaired,
        whole_words=whole_word_prefixes)
    log(f"decoding with the SavedModel {saved_model_dir}")
    return decode_stream(decoder, source, target, window, log=log,
                         prefixes=prefixes, after_window=after_window)
  if ct2_model_dir:
    postprocess = (
        registry.problem(problem_name).for_data(data_dir).postprocess
        if problem_name else None)
    decoder = Ct2Decoder(ct2_model_dir, decode_overrides, ct2_compute_type,
                         postprocess=postprocess)
    log(f"decoding with the CTranslate2 model {ct2_model_dir} "
        f"({ct2_compute_type}): {describe(decoder.hparams)}")
    return decode_stream(decoder, source, target, window, log=log,
                         after_window=after_window)
  jax = keras.backend.backend() == "jax"
  if jax and (xla or alignments is not None):
    raise UserError("under KERAS_BACKEND=jax every search is compiled by "
                    "JAX and no alignments are written: drop " +
                    ("--xla" if xla else "--alignment_file"))
  if jax:   # before the model is built: its programs are kept too
    keep_jax_programs()
  problem, vocabs, model, path = _load(problem_name, model_dir, data_dir,
                                       checkpoint_path, hparams_set,
                                       model_name, activation_dtype)
  hparams = decode_hparams(decode_overrides, problem.decode_defaults)
  round_weights(model, hparams.weights)
  options = dict(postprocess=problem.postprocess, target_vocab=vocabs[1],
                 constraint=problem.decode_constraint(data_dir),
                 repaired=problem.repaired if problem.repairs else None,
                 whole_words=whole_word_prefixes)
  if jax:
    from t2t_keras.decoding.backends import jax_decoder
    decoder = jax_decoder.JaxDecoder(model, vocabs[0], hparams, **options)
  else:
    decoder = Decoder(model, vocabs[0], hparams, xla=xla,
                      fixed_weights=True, **options)
  aligner = None
  if alignments is not None:
    if hparams.return_beams:
      raise UserError("word alignments go with one output a line, not "
                      "return_beams")
    aligner = Aligner(model, vocabs[0], vocabs[1],
                      max_length=hparams.max_input_length)
  log(f"decoding with {path} in {describe_precision(model, hparams)}: "
      f"{describe(hparams)}" + ("" if decoder.constraint is None else
                                f", constrained ({problem.name})")
      + (", compiled with XLA" if xla else "")
      + (", on JAX (jax.jit)" if jax else ""))
  return decode_stream(decoder, source, target, window, log=log,
                       prefixes=prefixes, aligner=aligner,
                       alignments=alignments, after_window=after_window)
