"""What a training run is checked against before it starts or resumes:
the run folder's model.json (the model, problem, vocabulary and training
shards it was made with), and the data's lengths against max_length."""

import os

from t2t_keras.io import json_files
from t2t_keras.data import pipeline
from t2t_keras.errors import UserError
from t2t_keras.models.builder import MODEL_SPEC, SPEC_TYPES


def saved_model_name(output_dir):
  """The model a run in ``output_dir`` trains, when it holds both
  hparams.json and model.json (t2t-trainer then continues it without
  --hparams_set, from its hparams.json); else None."""
  spec = os.path.join(output_dir, MODEL_SPEC)
  if not os.path.isfile(os.path.join(output_dir, "hparams.json")) or \
      not os.path.isfile(spec):
    return None
  return json_files.load(spec, SPEC_TYPES)["model"]


def check_model_spec(output_dir, spec, log):
  """Before the trainer writes model.json again: one that names another
  model, vocabulary sizes, problem or vocabulary (its SHA-256: a
  vocabulary made again, even of the same size) is a one-line
  ``UserError`` (the checkpoints hold that model and its ids), and one
  that does not read is named as it is rewritten from this command."""
  path = os.path.join(output_dir, MODEL_SPEC)
  if not os.path.exists(path):
    return
  try:
    old = json_files.load(path, SPEC_TYPES)
  except UserError as e:
    log(f"{e}: written again from this command's flags")
    return
  changed = [f"{k} {old[k]!r} there, {spec[k]!r} here"
             for k in SPEC_TYPES if old[k] != spec[k]]
  if changed:
    raise UserError(
        f"{path} records another model ({'; '.join(changed)}); use a new "
        "--output_dir or the run's --model and data")
  if old.get("problem") and spec.get("problem") and \
      old["problem"] != spec["problem"]:
    raise UserError(
        f"{path} records the problem {old['problem']}, not "
        f"{spec['problem']}: its checkpoints were trained on that one; use "
        "a new --output_dir or the run's --problem")
  data = spec.get("data_dir") or "the --data_dir"
  for key, differs in (
      ("vocab_sha256", lambda here, there: (
          f"'s vocabulary is not the one this run trained with (SHA-256 "
          f"{here[:12]}... here, {there[:12]}... in {path}): its token ids "
          "would name other pieces")),
      ("train_data_sha256", lambda here, there: (
          "'s training shards are not the ones this run trained on (their "
          f"names and sizes differ from those {path} records: made "
          "again?)"))):
    there, here = old.get(key), spec.get(key)
    if there and here and there != here:
      raise UserError(f"{data}{differs(here, there)}; give the --data_dir "
                      "the run trained on, or a new --output_dir")


def check_some_fit(problem, data_dir, max_length):
  """``problem.count_longer`` of the train split; a ``UserError`` when no
  training example fits ``max_length`` (nothing would ever train)."""
  counts = problem.count_longer("train", data_dir, max_length)
  if counts and counts[0] and counts[1] == counts[0]:
    raise UserError(f"all {counts[0]:,} training examples are longer than "
                    f"max_length={max_length} tokens, so none would train; "
                    "raise max_length (--hparams=max_length=...)")
  return counts


def report_long_examples(problem, data_dir, max_length, log,
                         train_counts=None):
  """Logs how many train examples ``max_length`` drops (``train_counts``,
  if counted already), and how many dev examples evaluation keeps and
  skips (``pipeline.EVAL_LENGTH_FACTOR``)."""
  for split, fate in (("train", "dropped from training"),
                      ("dev", "kept")):
    counts = (train_counts if split == "train" and train_counts else
              problem.count_longer(split, data_dir, max_length))
    if counts:
      total, longer = counts
      line = (f"{split}: {longer:,} of {total:,} examples longer than "
              f"max_length={max_length} tokens "
              f"({100 * longer / max(total, 1):.2f}%), {fate}")
      if split == "dev" and longer:
        limit = pipeline.EVAL_LENGTH_FACTOR * max_length
        _, skipped = problem.count_longer(split, data_dir, limit)
        line += (f"; {skipped:,} longer than {limit:,} tokens skipped from "
                 "the dev loss (their memory grows with the square of their "
                 "length; validation decoding cuts them to "
                 "max_input_length)")
      log(line)


def imported_step(output_dir):
  """The step of the checkpoint t2t-import wrote into ``output_dir``, as
  its model.json records it (until a trainer rewrites it), or None."""
  path = os.path.join(output_dir, MODEL_SPEC)
  if not os.path.isfile(path):
    return None
  try:
    return json_files.load(path).get("flags", {}).get("imported_step")
  except UserError:
    return None
