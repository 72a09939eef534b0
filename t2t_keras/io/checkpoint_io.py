"""Checkpoints that may not read and saves that may fail, said in one line.

A checkpoint is ``PREFIX.index`` plus ``PREFIX.data-*`` files. One cut short
(an interrupted copy, a failing disk) raises deep inside TensorFlow
(``IndexError: Read less bytes than requested``); a save on a full disk
raises ``ResourceExhaustedError`` and leaves a ``PREFIX_temp/`` directory.
Here those become a ``UserError`` naming the file and what to do, and:

* ``restore``: restores, or raises ``UnreadableCheckpoint`` (no extra read
  when the checkpoint is good);
* ``reads``: reads every tensor of a checkpoint without touching a model
  (for choosing a fallback); ``check_whole``: that, with every data shard
  the names promise, or one line naming what is missing or cut;
* ``newest_readable``: the newest checkpoint of a directory that reads;
* ``deleted_by_trainer``: whether one that stopped reading was a running
  trainer's to delete (no longer listed), or is damaged;
* ``move_aside``: a bad checkpoint's files to ``RUN/unreadable/`` and out of
  the directory's ``checkpoint`` state file, so it is never picked again;
* ``state_damaged``, ``rebuild_state``: a ``checkpoint`` state file that
  does not parse (TensorFlow ignores it, and a trainer would start over)
  rebuilt from the checkpoints found beside it;
* ``save``: ``CheckpointManager.save``, or ``SaveFailed`` after removing the
  partial files (the previous checkpoint stays the latest).
"""

import glob
import json
import os
import shutil
import time

import tensorflow as tf

from t2t_keras.errors import UserError

UNREADABLE_DIR = "unreadable"
READ_ERRORS = (IndexError, ValueError, tf.errors.OpError)
WRITE_ERRORS = (OSError, tf.errors.OpError)


class UnreadableCheckpoint(UserError):
  """A checkpoint whose files do not read."""

  def __init__(self, path, reason):
    super().__init__(f"checkpoint {path} does not read ({reason})")
    self.path, self.reason = path, reason


class SaveFailed(UserError):
  """A save that failed (no space, no permission, ...)."""


def reason(error):
  """One line about ``error``: its type and the first line of its text."""
  text = str(error).strip().splitlines()
  return f"{type(error).__name__}: {text[0][:160] if text else ''}".strip()


def files_of(path):
  """The files of the checkpoint ``path`` (a prefix)."""
  return sorted(glob.glob(glob.escape(path) + ".index") +
                glob.glob(glob.escape(path) + ".data-*"))


def restore(checkpoint, path):
  """``checkpoint.restore(path).expect_partial()``; its status, or
  ``UnreadableCheckpoint``."""
  if not files_of(path):
    raise UnreadableCheckpoint(path, "its files are missing")
  check_files(path)
  try:
    return checkpoint.restore(path).expect_partial()
  except READ_ERRORS as e:
    raise UnreadableCheckpoint(path, reason(e)) from None


def reads(path):
  """None if every tensor of the checkpoint ``path`` reads, else why not."""
  if not os.path.isfile(path + ".index"):
    return f"{path}.index is missing"
  try:
    reader = tf.train.load_checkpoint(path)
    for name in reader.get_variable_to_shape_map():
      reader.get_tensor(name)
  except READ_ERRORS as e:
    return reason(e)
  return None


def missing_shards(path):
  """The data files of the checkpoint ``path`` that its names say must be
  there and are not (``PREFIX.data-0000K-of-0000N`` for every K < N, N
  from any one found; none found: the first)."""
  found = glob.glob(glob.escape(path) + ".data-*-of-*")
  counts = {name.rsplit("-of-", 1)[1] for name in found}
  total = max((int(c) for c in counts if c.isdigit()), default=1)
  width = max((len(c) for c in counts), default=5)
  wanted = [f"{path}.data-{k:0{width}d}-of-{total:0{width}d}"
            for k in range(total)]
  return [name for name in wanted if name not in found]


def check_files(path):
  """``UnreadableCheckpoint`` naming the file unless the checkpoint
  ``path`` has its index and every data shard its names promise."""
  if not os.path.isfile(path + ".index"):
    raise UnreadableCheckpoint(path, f"{path}.index is missing")
  missing = missing_shards(path)
  if missing:
    raise UnreadableCheckpoint(path, f"its data file {missing[0]} is "
                               "missing")


def check_whole(path):
  """``check_files``, and every tensor of the checkpoint ``path`` read
  back (a shard cut short, or damaged, fails its checksum)."""
  check_files(path)
  why = reads(path)
  if why is not None:
    raise UnreadableCheckpoint(path, f"a data file is cut short or damaged: "
                               f"{why}")


def _state(directory):
  try:
    return tf.train.get_checkpoint_state(directory)
  except READ_ERRORS:
    return None


def state_damaged(directory):
  """Whether ``directory`` has a ``checkpoint`` state file that does not
  parse."""
  return (os.path.isfile(os.path.join(directory, "checkpoint")) and
          _state(directory) is None)


def found(directory):
  """The checkpoints in ``directory`` by their index files, oldest (lowest
  step) first."""
  prefixes = [p[:-len(".index")] for p in glob.glob(
      os.path.join(glob.escape(directory), "*.index"))]

  def step(prefix):
    tail = prefix.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else -1
  return sorted(prefixes, key=lambda p: (step(p), p))


def listed(directory):
  """The checkpoints the ``checkpoint`` state file of ``directory`` lists,
  oldest first (none: []); those found beside it if it is damaged."""
  state = _state(directory)
  if not state:
    return found(directory) if state_damaged(directory) else []
  # TensorFlow has joined each relative path with ``directory`` already.
  return list(state.all_model_checkpoint_paths) or [
      state.model_checkpoint_path]


def newest_readable(directory, skip=()):
  """The newest checkpoint of ``directory`` that reads (not in ``skip``),
  or None."""
  for path in reversed(listed(directory)):
    if path not in skip and reads(path) is None:
      return path
  return None


def deleted_by_trainer(path, directory, wait=2.0):
  """Whether the checkpoint ``path`` of ``directory`` went because a
  trainer deleted it (it keeps its last few), not because it is damaged: it
  is no longer listed. TensorFlow's CheckpointManager deletes the files
  between two writes of the state file, the first still listing them, so a
  checkpoint with files missing that is still listed is watched for up to
  ``wait`` seconds; one whose files are all there is damaged at once."""
  deadline = time.time() + wait
  while path in listed(directory):
    whole = os.path.isfile(path + ".index") and glob.glob(
        glob.escape(path) + ".data-*")
    if whole or time.time() > deadline:
      return False
    time.sleep(0.1)
  return True


def move_aside(path, run_dir):
  """Moves the checkpoint ``path``'s files into ``run_dir/unreadable/``
  and drops it from its directory's state file. Returns where they went."""
  target = os.path.join(run_dir, UNREADABLE_DIR)
  os.makedirs(target, exist_ok=True)
  for name in files_of(path):
    os.replace(name, os.path.join(target, os.path.basename(name)))
  directory = os.path.dirname(path)
  _write_state(directory, [p for p in listed(directory) if p != path])
  return target


def rebuild_state(directory):
  """Rewrites ``directory``'s state file from the checkpoints found there;
  returns them."""
  paths = found(directory)
  _write_state(directory, paths)
  return paths


def _write_state(directory, paths):
  """The state file listing ``paths`` (oldest first), written atomically in
  its text format; none: no state file."""
  state_file = os.path.join(directory, "checkpoint")
  if not paths:
    if os.path.exists(state_file):
      os.remove(state_file)
    return
  names = [os.path.relpath(p, directory) for p in paths]
  with open(state_file + ".partial", "w", encoding="utf-8") as f:
    f.write(f"model_checkpoint_path: {json.dumps(names[-1])}\n" + "".join(
        f"all_model_checkpoint_paths: {json.dumps(n)}\n" for n in names))
  os.replace(state_file + ".partial", state_file)


def remove_partial_saves(directory):
  """Removes what an interrupted save leaves in ``directory``."""
  for leftover in glob.glob(os.path.join(glob.escape(directory), "*_temp")):
    shutil.rmtree(leftover, ignore_errors=True)
  for leftover in glob.glob(os.path.join(glob.escape(directory),
                                         "*.tempstate*")):
    os.remove(leftover)


def save(manager, step):
  """``manager.save(checkpoint_number=step)``; its path, or ``SaveFailed``
  naming the directory and the cause, with the partial files removed."""
  try:
    return manager.save(checkpoint_number=step)
  except WRITE_ERRORS as e:
    remove_partial_saves(manager.directory)
    raise save_failed(step, manager.directory, e,
                      manager.latest_checkpoint) from None


def save_failed(step, directory, error, latest):
  """The one-line ``SaveFailed`` for checkpoint ``step`` of ``directory``
  whose write raised ``error``; ``latest``: the checkpoint still kept."""
  kept = (f"{latest} is still the latest checkpoint, and the same "
          "command resumes from it" if latest else "no checkpoint was "
          "kept, and the same command starts the run again")
  return SaveFailed(f"could not save checkpoint {step} in {directory} "
                    f"({cause(error)}); {kept} once the cause is fixed")


def cause(error):
  """'No space left on device' and the like, from an OSError or a
  TensorFlow error's text (whose message ends in the system's reason after
  the op's name and the file: "{{function_node ...}} PATH; File too
  large")."""
  if isinstance(error, OSError) and error.strerror:
    return error.strerror
  text = getattr(error, "message", None) or str(error)
  for known in ("No space left on device", "Permission denied",
                "Read-only file system", "Disk quota exceeded",
                "File too large"):
    if known in text:
      return known
  last = text.rsplit("; ", 1)[-1].strip()
  return last if "; " in text and "{{" not in last else reason(error)
