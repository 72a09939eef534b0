"""t2t-import: a tensor2tensor run -> a t2t_keras run and data directory.

DATA gets the run's vocabulary (copied as it is) and ``t2t_import.json``
(where tensor2tensor's shards are, which problem made them); RUN gets
hparams.json, model.json and ``ckpt-<global_step>``: the model's weights
and an optimizer whose step is tensor2tensor's, so that the learning-rate
schedule continues where it was, with Adam's moments where the checkpoint
has them (a checkpoint without them: zero). Every
command then takes RUN and DATA as a run of its own, with
``--problem=t2t_import``.
"""

import json
import os

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.data.t2t_subword import T2TSubwordVocab
from t2t_keras.data.vocab_check import vocabs_digest
from t2t_keras.errors import ExistingFileError, UserError
from t2t_keras.io.logs import log_line
from t2t_keras.models.builder import model_spec, save_model_spec
from t2t_keras.io.outputs import output_file
from t2t_keras.problems.t2t_import import RECORD
from t2t_keras.t2t_import import weights
from t2t_keras.t2t_import.hparams_map import map_hparams
from t2t_keras.t2t_import.t2t_run import find_vocab, read_run, shard_name
from t2t_keras.training.optimizer import optimizer_from_hparams

MODEL = "transformer_t2t"
PROBLEM = "t2t_import"


def _sizes(matrices):
  """(input, target) vocabulary sizes from the embedding matrices."""
  rows = {scope: m.shape[0] for scope, m in matrices.items()}
  if "shared" in rows:
    return rows["shared"], rows.get("softmax", rows["shared"])
  if "input_emb" not in rows or "target_emb" not in rows:
    raise UserError("the checkpoint holds no symbol_modality embeddings "
                    f"(found scopes {sorted(rows)}): not tensor2tensor's "
                    "transformer on text")
  return rows["input_emb"], rows["target_emb"]


def _refuse_existing(output_dir, data_dir):
  for folder, name in ((output_dir, "hparams.json"), (data_dir, RECORD)):
    if os.path.exists(os.path.join(folder, name)):
      raise ExistingFileError(
          f"{os.path.join(folder, name)} exists: t2t-import writes a new "
          "run and data directory; give empty or new folders")


def write_data(data_dir, vocab_path, run, t2t_data_dir):
  """The vocabulary copy and ``t2t_import.json``; the vocabulary."""
  os.makedirs(data_dir, exist_ok=True)
  vocab = T2TSubwordVocab.load(vocab_path)
  name = os.path.basename(vocab_path)
  vocab.save(os.path.join(data_dir, name))
  shards = shard_name(t2t_data_dir, run.problem) if t2t_data_dir else None
  record = {"vocab": name, "t2t_problem": run.problem,
            "t2t_data_dir": t2t_data_dir and os.path.abspath(t2t_data_dir),
            "shard_name": shards,
            # A _rev problem reads its base's shards the other way round.
            "reverse": bool(shards and run.problem and
                            run.problem.endswith("_rev") and
                            shards != run.problem),
            "imported_from": os.path.abspath(run.checkpoint)}
  with output_file(os.path.join(data_dir, RECORD), "w",
                   encoding="utf-8") as f:
    json.dump(record, f, indent=2, sort_keys=True)
  return vocab, record


def import_run(t2t_output_dir, t2t_data_dir, output_dir, data_dir,
               checkpoint_path=None, target_space_id=0, vocab_file=None,
               log=log_line):
  """Writes RUN (``output_dir``) and DATA (``data_dir``) from a
  tensor2tensor run; returns the step imported."""
  _refuse_existing(output_dir, data_dir)
  run = read_run(t2t_output_dir, checkpoint_path)
  notes = []
  hparams = map_hparams(run.hparams, target_space_id, notes)
  reader = tf.train.load_checkpoint(run.checkpoint)
  names = list(reader.get_variable_to_shape_map())
  in_size, out_size = _sizes(weights.embeddings(
      reader, weights.model_variables(names)))
  vocab_path = find_vocab(t2t_data_dir or "", run.problem, vocab_file)
  vocab = T2TSubwordVocab.load(vocab_path)
  if vocab.size > min(in_size, out_size):
    raise UserError(f"{vocab_path} has {vocab.size} subtokens, the "
                    f"checkpoint's embeddings {in_size} and {out_size} rows: "
                    "it is not this run's vocabulary")
  model = registry.model(MODEL)(hparams, in_size, out_size)
  model.build()
  weights.assign(model, reader, names)
  vocab, record = write_data(data_dir, vocab_path, run, t2t_data_dir)
  os.makedirs(output_dir, exist_ok=True)
  hparams.save(os.path.join(output_dir, "hparams.json"))
  save_model_spec(output_dir, model_spec(
      MODEL, in_size, out_size, problem_name=PROBLEM,
      flags={"imported_from": record["imported_from"],
             "imported_step": run.step},
      vocab_sha256=vocabs_digest([vocab, vocab]), data_dir=data_dir))
  optimizer = optimizer_from_hparams(hparams)
  optimizer.build(model.trainable_variables)
  optimizer.iterations.assign(run.step)
  moments = weights.assign_moments(optimizer, model, reader, names)
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, optimizer=optimizer), output_dir,
      max_to_keep=None)
  saved = manager.save(checkpoint_number=run.step)
  log(f"imported {run.checkpoint} (step {run.step:,}, problem "
      f"{run.problem}) as {saved}; vocabulary {vocab_path} "
      f"({vocab.size} subtokens) in {data_dir}")
  log(f"Adam's moments of {moments} variables from the checkpoint" if
      moments else "the checkpoint holds no Adam moments: they start at zero")
  for note in notes:
    log("note: " + note)
  if not record["shard_name"]:
    log(f"note: no TFRecord shards of {run.problem} in "
        f"{t2t_data_dir or '(no --t2t_data_dir)'}: the run decodes and "
        "exports, and trains once t2t-import is given the data dir")
  return run.step


def overrides(output_dir):
  """The ``--hparams`` string that, over the ``transformer_t2t`` set,
  gives the hparams t2t-import wrote into ``output_dir`` (for a new run
  warm-started from it)."""
  from t2t_keras.hparams import HParams  # pylint: disable=g-import-not-at-top
  base = registry.hparams(MODEL)
  saved = HParams.load(os.path.join(output_dir, "hparams.json"), like=base)
  return ",".join(f"{k}={v}" for k, v in sorted(saved.values().items())
                  if base.get(k) != v)
