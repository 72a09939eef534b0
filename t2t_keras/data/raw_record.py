"""What a data directory was made from: the raw files' sizes and SHA-256,
recorded by t2t-datagen in its shard record, so that running it again on a
corpus that changed since (a corrected file, another one under the same
name) is refused in one line instead of keeping a vocabulary and shards
that encode the old text."""

import hashlib
import os

from t2t_keras.data.corpus import CorpusError

_CHUNK = 1 << 20


def _sha256(path):
  digest = hashlib.sha256()
  with open(path, "rb") as f:
    for chunk in iter(lambda: f.read(_CHUNK), b""):
      digest.update(chunk)
  return digest.hexdigest()


def fingerprints(paths):
  """{absolute path: {"bytes": size, "sha256": hex}} of the files of
  ``paths`` that exist."""
  found = {}
  for path in paths:
    if os.path.isfile(path):
      found[os.path.abspath(path)] = {"bytes": os.path.getsize(path),
                                      "sha256": _sha256(path)}
  return found


def check_unchanged(recorded, now, data_dir, others=True):
  """A ``CorpusError`` when a file that ``recorded`` lists differs in
  ``now`` (both ``fingerprints`` dicts), or when ``now`` holds a file whose
  content none of the recorded ones has (the data dir was made from other
  files; the same files moved elsewhere pass; ``others=False``: a new file
  passes, as a corpus added to a weighted mixture). Nothing recorded
  passes."""
  remedy = (f"give t2t-datagen a new --data_dir, or --overwrite to make "
            f"{data_dir} again from these files")
  for path, found in now.items():
    then = (recorded or {}).get(path)
    if then and (found["bytes"], found["sha256"]) != (
        then.get("bytes"), then.get("sha256")):
      raise CorpusError(
          f"{path} changed since {data_dir} was made from it: its "
          f"vocabulary and shards encode the old text; {remedy}")
  if not recorded or not others:
    return
  known = {(r.get("bytes"), r.get("sha256")) for r in recorded.values()}
  for path, found in sorted(now.items()):
    if (found["bytes"], found["sha256"]) not in known:
      raise CorpusError(
          f"{data_dir} was made from other raw files than {path} (from "
          f"{', '.join(sorted(recorded)[:2])}"
          f"{', ...' if len(recorded) > 2 else ''}): its vocabulary and "
          f"shards encode that text; {remedy}")
