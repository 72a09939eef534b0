"""The vocabulary a run was trained with, checked before the run is used.

A run records the SHA-256 of its problem's vocabulary files in model.json
(``vocab_sha256``) when it starts. A decoder, exporter, scorer or attention
picture given a ``--data_dir`` whose vocabulary is another (a retrained
vocabulary of the same size decodes wrong text without a word; another size
fails deep in an embedding lookup) is refused in one line first.
"""

import hashlib
import os

from t2t_keras.io import json_files
from t2t_keras.errors import UserError
from t2t_keras.models.builder import MODEL_SPEC


def vocabs_digest(vocabs):
  """SHA-256 of the (input, target) vocabularies' files."""
  digest = hashlib.sha256()
  for vocab in vocabs:
    digest.update(getattr(vocab, "model_proto", b""))
  return digest.hexdigest()


def vocab_digest(problem, data_dir):
  """SHA-256 of the problem's vocabulary files (input, then target), or
  None for a problem without a text vocabulary."""
  try:
    vocabs = problem.input_vocab(data_dir), problem.target_vocab(data_dir)
  except UserError:
    return None
  return vocabs_digest(vocabs)


def train_data_digest(problem, data_dir):
  """SHA-256 of the names and sizes of the problem's training shards in
  ``data_dir`` (``data_files``), or None for a problem without files.
  Datagen made again, from other text or with other settings, changes
  it."""
  files = getattr(problem, "data_files", None)
  if files is None or not data_dir:
    return None
  try:
    found = sorted((os.path.basename(f), os.path.getsize(f))
                   for f in files(data_dir)
                   if "-train" in os.path.basename(f))
  except (OSError, UserError):
    return None
  if not found:
    return None
  digest = hashlib.sha256()
  for name, size in found:
    digest.update(f"{name}\t{size}\n".encode("utf-8"))
  return digest.hexdigest()


def _run_dirs(model_dir, checkpoint_path):
  """``model_dir`` and the folders of ``checkpoint_path`` (comma-separated
  for an ensemble; a directory, or a checkpoint in one)."""
  found = [model_dir]
  for path in (checkpoint_path or "").split(","):
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    if folder and folder not in found:
      found.append(folder)
  return found


def check_run_vocab(vocabs, data_dir, model_dir, checkpoint_path=None):
  """A ``UserError`` when ``vocabs``, the (input, target) vocabularies of
  ``data_dir``, are not those recorded by the run in ``model_dir``, or by
  the run of any ``checkpoint_path`` folder that holds a model.json
  (``<run>/avg`` does: t2t-avg-all copies it). A folder without the record
  is not checked here."""
  here = None
  for folder in _run_dirs(model_dir, checkpoint_path):
    path = os.path.join(folder, MODEL_SPEC)
    if not os.path.exists(path):
      continue
    recorded = json_files.load(path).get("vocab_sha256")
    here = here or vocabs_digest(vocabs)
    if recorded and here != recorded:
      raise UserError(
          f"{data_dir}'s vocabulary is not the one {folder} was trained "
          f"with (SHA-256 {here[:12]}... here, {recorded[:12]}... in "
          f"{path}): give the --data_dir the run was trained on")
