"""A problem's TFRecord shards on disk: one split written under temporary
names, and the manifest that records what datagen wrote.

A split's shards are written as ``<shard>.partial`` and renamed when the
whole split is written, so an interrupted or failed run leaves nothing that
looks finished. The manifest, ``<data_name>.shards.json`` in the data
directory, holds::

  {"sizes": {shard: bytes},            # checked by readers: a shard cut
                                       # inside a record's header reads as
                                       # a clean end of file
   "lengths": {split: {length: count}}, # the longer of inputs and targets
   ...}                                # what else datagen records (raw
                                       # files, BPE-dropout copies, trees)
"""

import collections
import json
import os
import time

import tensorflow as tf

from t2t_keras.io import json_files
from t2t_keras.io import files
from t2t_keras.data import pipeline
from t2t_keras.data.corpus import CorpusError
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line
from t2t_keras.io.outputs import output_file

_AGAIN = "run t2t-datagen again"


def manifest_path(data_dir, data_name):
  return os.path.join(data_dir, f"{data_name}.shards.json")


def read_manifest(path):
  """The manifest at ``path``, {"sizes": {}} when there is none; a damaged
  one is a one-line error that names it."""
  if not os.path.exists(path):
    return {"sizes": {}}
  manifest = json_files.load(path, {"sizes": dict}, _AGAIN)
  for shard, size in manifest["sizes"].items():
    json_files.check(path, f"the size of {shard}", size, int, _AGAIN)
  return manifest


def write_manifest(path, manifest):
  """Replaces the manifest at ``path`` whole (never half-written)."""
  with output_file(path, "w", encoding="utf-8") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)


def update_manifest(path, **entries):
  manifest = read_manifest(path)
  manifest.update(entries)
  write_manifest(path, manifest)


def write_split(examples, final, split, data_dir, log=log_line,
                log_every=50_000):
  """Writes ``examples`` ((inputs, targets) id lists) round-robin into the
  shards ``final`` (paths).

  Returns (number written, Counter of the longer of inputs and targets).
  With none written, or on any error, no shard of the split is left; a
  write the system refused (a full disk, a file-size limit) is a one-line
  CorpusError.
  """
  partial = [p + ".partial" for p in final]
  writers = [tf.io.TFRecordWriter(p) for p in partial]
  start, count, lengths = time.time(), 0, collections.Counter()
  try:
    try:
      for inputs, targets in examples:
        writers[count % len(writers)].write(
            pipeline.encode_example(inputs, targets))
        lengths[max(len(inputs), len(targets))] += 1
        count += 1
        if count % log_every == 0:
          log(f"  {split}: {count:,} pairs encoded "
              f"({count / (time.time() - start):,.0f}/s)")
    finally:
      for w in writers:
        w.close()
  except BaseException as e:
    # A full disk (TensorFlow's writer reports it as an OpError), a signal,
    # a bad line: the shards in the making go, the finished splits stay.
    _remove(partial)
    if not isinstance(e, (tf.errors.OpError, OSError)):
      raise
    why = getattr(e, "message", None) or getattr(e, "strerror", None) or e
    raise CorpusError(
        f"could not write the {split} shards in {data_dir}: "
        f"{str(why).split('; ')[-1]} (a full disk, or a file-size limit?); "
        "no partial shard was left, and t2t-datagen again writes what is "
        "missing") from None
  if count == 0:
    _remove(partial)
    return 0, lengths
  for p, f in zip(partial, final):
    files.replace(p, f)
  return count, lengths


def record_split(path, final, split, lengths):
  """Records the byte size of each shard in ``final`` and the split's
  example lengths (a Counter) in the manifest at ``path``."""
  manifest = read_manifest(path)
  manifest["sizes"].update(
      {os.path.basename(p): os.path.getsize(p) for p in final})
  manifest.setdefault("lengths", {})[split] = {
      str(k): v for k, v in sorted(lengths.items())}
  write_manifest(path, manifest)


def count_longer(path, split, max_length):
  """(examples, examples longer than ``max_length``) of ``split`` from the
  lengths recorded at ``path``; None when they are not recorded."""
  recorded = read_manifest(path).get("lengths", {})
  if split not in recorded:
    return None
  counts = {int(k): v for k, v in recorded[split].items()}
  return (sum(counts.values()),
          sum(v for k, v in counts.items() if k > max_length))


def check_sizes(path, files):
  """A one-line error for a shard whose size is not the one recorded at
  ``path`` (shards written before the record are not checked)."""
  sizes = read_manifest(path)["sizes"]
  for name in files:
    expected = sizes.get(os.path.basename(name))
    if expected is not None and os.path.getsize(name) != expected:
      raise UserError(
          f"{name} is damaged: {os.path.getsize(name):,} bytes, datagen "
          f"wrote {expected:,}; delete it and run t2t-datagen again with "
          "the same flags: it rewrites the splits whose shards are missing")


def _remove(paths):
  for p in paths:
    files.remove(p)
