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
from t2t_keras.io import checkpoint_io, json_files
from t2t_keras.io.logs import log_line
from t2t_keras.io.outputs import locked, output_file
from t2t_keras.io.staging import StagedFiles, StagedFolder
from t2t_keras.models.builder import model_spec, save_model_spec
from t2t_keras.problems.t2t_import import RECORD
from t2t_keras.t2t_import import weights
from t2t_keras.t2t_import.hparams_map import map_hparams
from t2t_keras.t2t_import.t2t_run import (check_shards, find_vocabs,
                                          read_run, shard_name)
from t2t_keras.training.optimizer import optimizer_from_hparams
from t2t_keras.hparams import HParams

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


def _embeddings_as_stored(hparams, scopes):
  """Which matrices are one, as the checkpoint stores them (a run with a
  vocabulary a side has its input and target embeddings apart whatever
  its shared_embedding_and_softmax_weights says)."""
  hparams.shared_embedding = "shared" in scopes
  hparams.shared_embedding_and_softmax_weights = "softmax" not in scopes


def _refuse_existing(output_dir, data_dir, imported_from):
  """Refuses an --output_dir that holds anything, and a --data_dir that
  holds another run's import."""
  if os.path.isdir(output_dir) and os.listdir(output_dir):
    held = sorted(os.listdir(output_dir))
    raise ExistingFileError(
        f"--output_dir {output_dir} holds {', '.join(held[:3])}"
        f"{', ...' if len(held) > 3 else ''}: t2t-import writes a new run; "
        "give an empty or new folder")
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ExistingFileError(f"--output_dir {output_dir} is a file")
  record = os.path.join(data_dir, RECORD)
  if os.path.exists(record):
    held = json_files.load(record, {"imported_from": str},
                           "remove it, or give another --data_dir")
    if held["imported_from"] != imported_from:
      raise ExistingFileError(
          f"{record} exists, for {held['imported_from']}: t2t-import "
          "writes a new data directory; give an empty or new folder")


def _already_imported(output_dir, data_dir, imported_from, step):
  """Whether ``output_dir`` and ``data_dir`` hold this very import, whole
  (the same command run again after it finished)."""
  spec_path = os.path.join(output_dir, "model.json")
  record_path = os.path.join(data_dir, RECORD)
  if not (os.path.isfile(spec_path) and os.path.isfile(record_path)):
    return False
  spec = json_files.load(spec_path, {"flags": dict})
  record = json_files.load(record_path, {"imported_from": str})
  if (spec["flags"].get("imported_from") != imported_from or
      spec["flags"].get("imported_step") != step or
      record["imported_from"] != imported_from):
    return False
  latest = tf.train.latest_checkpoint(output_dir)
  return latest is not None and latest.endswith(f"ckpt-{step}")


def _check_vocab(path, vocab, rows, side, divisor):
  """Refuses a vocabulary whose size does not give ``rows`` embedding
  rows (tensor2tensor pads the size to a multiple of vocab_divisor)."""
  padded = -(-vocab.size // divisor) * divisor
  if padded != rows:
    raise UserError(
        f"{path} has {vocab.size} subtokens, the checkpoint's {side} "
        f"embedding {rows} rows: it is not this run's {side} vocabulary"
        + (" (a line lost or added shifts every id after it)"
           if abs(vocab.size - rows) < 3 else ""))


def write_data(data_dir, vocab_paths, run, t2t_data_dir):
  """The vocabulary copies and ``t2t_import.json`` into ``data_dir`` (a
  staging folder); the record."""
  names = [os.path.basename(p) for p in vocab_paths]
  if names[0] == names[1] and vocab_paths[0] != vocab_paths[1]:
    names[1] = "target." + names[1]
  for path, name in dict(zip(vocab_paths, names)).items():
    T2TSubwordVocab.load(path).save(os.path.join(data_dir, name))
  shards = shard_name(t2t_data_dir, run.problem) if t2t_data_dir else None
  record = {"vocab": names[0], "t2t_problem": run.problem,
            "t2t_data_dir": t2t_data_dir and os.path.abspath(t2t_data_dir),
            "shard_name": shards,
            # A _rev problem reads its base's shards the other way round.
            "reverse": bool(shards and run.problem and
                            run.problem.endswith("_rev") and
                            shards != run.problem),
            "imported_from": os.path.abspath(run.checkpoint)}
  if names[1] != names[0]:
    record["target_vocab"] = names[1]
  with output_file(os.path.join(data_dir, RECORD), "w",
                   encoding="utf-8") as f:
    json.dump(record, f, indent=2, sort_keys=True)
  return record


def _write(run_stage, data_stage, vocab_paths, run, t2t_data_dir, hparams,
           model, optimizer, imported_from, in_size, out_size, vocabs,
           data_dir):
  """RUN and DATA's files made in their staging folders, then swapped in;
  the record written into DATA."""
  try:
    staged = run_stage.begin()
    record = write_data(data_stage.begin(), vocab_paths, run, t2t_data_dir)
    hparams.save(os.path.join(staged, "hparams.json"))
    save_model_spec(staged, model_spec(
        MODEL, in_size, out_size, problem_name=PROBLEM,
        flags={"imported_from": imported_from, "imported_step": run.step},
        vocab_sha256=vocabs_digest(vocabs), data_dir=data_dir))
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model, optimizer=optimizer), staged,
        max_to_keep=None)
    checkpoint_io.save(manager, run.step)
  except BaseException:
    run_stage.abort()
    data_stage.abort()
    raise
  # DATA first: a kill between the two leaves no RUN, and the rerun
  # (which finds this import's record in DATA) makes RUN again.
  data_stage.commit()
  run_stage.commit()
  return record


def import_run(t2t_output_dir, t2t_data_dir, output_dir, data_dir,
               checkpoint_path=None, target_space_id=0, vocab_file=None,
               log=log_line, target_vocab_file=None, problem=None):
  """Writes RUN (``output_dir``) and DATA (``data_dir``) from a
  tensor2tensor run; returns the step imported. Everything is read and
  checked first, then written into staging folders and swapped in
  (``io.staging``): a stop or kill leaves nothing the run reads, and the
  same command run again starts over, or says the import is done."""
  run = read_run(t2t_output_dir, checkpoint_path, problem)
  imported_from = os.path.abspath(run.checkpoint)
  if _already_imported(output_dir, data_dir, imported_from, run.step):
    log(f"{output_dir} and {data_dir} already hold {run.checkpoint} (step "
        f"{run.step:,}): nothing to do")
    return run.step
  _refuse_existing(output_dir, data_dir, imported_from)
  notes = []
  hparams = map_hparams(run.hparams, target_space_id, notes)
  reader = tf.train.load_checkpoint(run.checkpoint)
  names = list(reader.get_variable_to_shape_map())
  matrices = weights.embeddings(reader, weights.model_variables(names))
  in_size, out_size = _sizes(matrices)
  _embeddings_as_stored(hparams, set(matrices))
  vocab_paths = find_vocabs(t2t_data_dir or "", run.problem, vocab_file,
                            target_vocab_file, (in_size, out_size))
  vocabs = [T2TSubwordVocab.load(p) for p in vocab_paths]
  divisor = int(run.hparams.get("vocab_divisor") or 1)
  for path, vocab, rows, side in zip(vocab_paths, vocabs,
                                     (in_size, out_size),
                                     ("input", "target")):
    _check_vocab(path, vocab, rows, side, divisor)
  shards = shard_name(t2t_data_dir, run.problem) if t2t_data_dir else None
  if shards:
    check_shards(t2t_data_dir, shards)
  model = registry.model(MODEL)(hparams, in_size, out_size)
  model.build()
  weights.assign(model, reader, names)
  optimizer = optimizer_from_hparams(hparams)
  optimizer.build(model.trainable_variables)
  optimizer.iterations.assign(run.step)
  moments = weights.assign_moments(optimizer, model, reader, names)

  run_stage = StagedFolder(output_dir)
  os.makedirs(data_dir, exist_ok=True)
  data_stage = StagedFiles(data_dir, "t2t-import")
  os.makedirs(os.path.dirname(run_stage.stage), exist_ok=True)
  with locked(run_stage.stage):   # a second import of RUN is refused
    record = _write(run_stage, data_stage, vocab_paths, run, t2t_data_dir,
                    hparams, model, optimizer, imported_from, in_size,
                    out_size, vocabs, data_dir)
  saved = os.path.join(output_dir, f"ckpt-{run.step}")
  log(f"imported {run.checkpoint} (step {run.step:,}, problem "
      f"{run.problem}) as {saved}; vocabulary " + (
          f"{vocab_paths[0]} ({vocabs[0].size} subtokens)"
          if vocab_paths[0] == vocab_paths[1] else
          f"{vocab_paths[0]} ({vocabs[0].size} subtokens) for the source, "
          f"{vocab_paths[1]} ({vocabs[1].size}) for the target")
      + f" in {data_dir}")
  log(f"Adam's moments of {moments} variables from the checkpoint" if
      moments else "the checkpoint holds no Adam moments: they start at zero")
  for note in notes:
    log("note: " + note)
  if not record["shard_name"]:
    log(f"note: no TFRecord shards of {run.problem} in "
        f"{t2t_data_dir or '(no --t2t_data_dir)'}: the run decodes and "
        "exports, and trains once t2t-import is given the data dir where "
        f"tensor2tensor wrote {run.problem}'s shards")
  return run.step


def overrides(output_dir):
  """The ``--hparams`` string that, over the ``transformer_t2t`` set,
  gives the hparams t2t-import wrote into ``output_dir`` (for a new run
  warm-started from it)."""
  base = registry.hparams(MODEL)
  saved = HParams.load(os.path.join(output_dir, "hparams.json"), like=base)
  return ",".join(f"{k}={v}" for k, v in sorted(saved.values().items())
                  if base.get(k) != v)
