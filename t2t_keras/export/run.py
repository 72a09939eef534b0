"""What t2t-exporter runs."""

import os

from t2t_keras import registry
from t2t_keras.data.problem import Problem
from t2t_keras.data.vocab_check import check_run_vocab
from t2t_keras.decoding.options import (decode_hparams, describe,
                                        describe_precision)
from t2t_keras.errors import UserError
from t2t_keras.export.ctranslate2 import export_ctranslate2
from t2t_keras.export.exporter import export
from t2t_keras.io.logs import log_line
from t2t_keras.models.builder import check_trained_with, load_model_from_dir
from t2t_keras.models.prepared import round_weights


def export_run(problem_name, model_dir, data_dir, checkpoint_path=None,
               decode_overrides="", export_dir=None, version=None,
               export_format="savedmodel", activation_dtype=None,
               hparams_set=None, model_name=None, xla=False, log=log_line):
  """Exports the run in ``model_dir`` as a SavedModel to
  ``<export_dir>/<version>`` (default ``<model_dir>/export``), or with
  ``export_format="ctranslate2"`` as a CTranslate2 model to ``export_dir``
  (default ``<model_dir>/ctranslate2``). A SavedModel computes in
  ``activation_dtype`` (default: as the run trained); a CTranslate2 model
  holds float32 weights and takes its precision when it is loaded.
  ``hparams_set`` and ``model_name`` (the flags) must be the run's.
  ``xla``: the SavedModel's search is compiled with XLA where it runs.
  Returns the path."""
  if activation_dtype and export_format == "ctranslate2":
    raise UserError("activation_dtype is for SavedModels: a CTranslate2 "
                    "model picks its precision when it decodes "
                    "(t2t-decoder --ct2_compute_type)")
  if checkpoint_path and "," in checkpoint_path:
    raise UserError("t2t-exporter exports one model: an ensemble "
                    "(--checkpoint_path=A,B) decodes through t2t-decoder only")
  problem = registry.problem(problem_name).for_data(data_dir)
  vocabs = problem.input_vocab(data_dir), problem.target_vocab(data_dir)
  check_run_vocab(vocabs, data_dir, model_dir, checkpoint_path)
  model, _, spec, path = load_model_from_dir(model_dir, checkpoint_path,
                                             activation_dtype)
  check_trained_with(spec, model_dir, hparams_set, model_name)
  hparams = decode_hparams(decode_overrides, problem.decode_defaults)
  if export_format == "ctranslate2" and hparams.weights != "float32":
    raise UserError(f"weights={hparams.weights} is for SavedModels: a "
                    "CTranslate2 model quantizes when it decodes "
                    "(t2t-decoder --ct2_compute_type=int8)")
  round_weights(model, hparams.weights)
  if export_format == "ctranslate2":
    target = export_ctranslate2(
        model, vocabs, hparams,
        export_dir or os.path.join(model_dir, "ctranslate2"))
    log(f"exported {path} to the CTranslate2 model {target} (float32; "
        f"decoding defaults {describe(hparams)})")
    return target
  if type(problem).postprocess is not Problem.postprocess:
    log(f"note: {problem_name}'s outputs are exported as decoded text, "
        "without its post-processing (t2t-decoder --problem=... "
        "--saved_model_dir=... applies it)")
  constraint = problem.decode_constraint(data_dir)
  target = export(model, vocabs[0], hparams,
                  export_dir or os.path.join(model_dir, "export"), version,
                  target_vocab=vocabs[1], constraint=constraint, xla=xla)
  log(f"exported {path} (in {describe_precision(model, hparams)}; "
      f"{describe(hparams)}"
      + ("; the search compiled with XLA, which TF Serving runs with "
         "--xla_cpu_compilation_enabled or --xla_gpu_compilation_enabled"
         if xla else "") + f") to {target}")
  return target
