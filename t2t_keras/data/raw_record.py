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


def check_unchanged(recorded, now, data_dir):
  """A ``CorpusError`` when a file that ``recorded`` lists differs in
  ``now`` (both ``fingerprints`` dicts); files that are gone or were not
  recorded pass."""
  for path, found in now.items():
    then = (recorded or {}).get(path)
    if then and (found["bytes"], found["sha256"]) != (
        then.get("bytes"), then.get("sha256")):
      raise CorpusError(
          f"{path} changed since {data_dir} was made from it: its "
          "vocabulary and shards encode the old text; give t2t-datagen a "
          f"new --data_dir (or delete {data_dir})")
