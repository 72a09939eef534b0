"""The real-text tests' public corpora: check a folder of them, or fetch
what can be fetched into the cache the tests read.

    python scripts/fetch_test_data.py             # fetch into the cache
    python scripts/fetch_test_data.py --check DIR # check a copy

The tests read, in order: the folder ``T2T_TEST_DATA`` names,
``../shared/data`` beside the clone (CI's), then the cache
(``~/.cache/t2t_keras/test_data``). Each file is checked against its
SHA-256 (``test_data_files.json``, made from CI's copy); a fetch keeps a
file only when it matches, and the cache counts only when every file is
there. Multi30k comes from its public repository; newstest2013, the WMT
sample and the treebank samples were cut from their sources (listed per
file) and are not fetched: copy them from a machine that has them into
the cache, and ``--check`` says which are missing or differ.
"""

import argparse
import gzip
import hashlib
import json
import os
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "t2t_keras",
                     "test_data")
MULTI30K = "https://github.com/multi30k/dataset/raw/a3d2e0d2/data/task1/raw/"


def manifest():
  """{relative path: {"sha256", "source"}}."""
  with open(os.path.join(HERE, "test_data_files.json"),
            encoding="utf-8") as f:
    return json.load(f)


def digest(path):
  h = hashlib.sha256()
  with open(path, "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
      h.update(block)
  return h.hexdigest()


def check(folder):
  """The manifest's files missing from ``folder`` or differing there."""
  bad = []
  for name, entry in sorted(manifest().items()):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
      bad.append(f"{name}: missing (source: {entry['source']})")
    elif digest(path) != entry["sha256"]:
      bad.append(f"{name}: differs from its SHA-256 {entry['sha256'][:16]}")
  return bad


def fetch(folder):
  """Downloads the Multi30k files into ``folder``; each kept only when its
  SHA-256 matches."""
  for name, entry in sorted(manifest().items()):
    if not name.startswith("multi30k/"):
      continue
    path = os.path.join(folder, name)
    if os.path.isfile(path) and digest(path) == entry["sha256"]:
      continue
    os.makedirs(os.path.dirname(path), exist_ok=True)
    url = MULTI30K + os.path.basename(name) + ".gz"
    print(f"fetching {url}")
    try:
      with urllib.request.urlopen(url, timeout=60) as response:
        data = gzip.decompress(response.read())
    except (OSError, EOFError) as e:   # no network, a cut download
      print(f"{name}: could not fetch {url}: {e}")
      continue
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
      print(f"{name}: the download differs from its SHA-256; not kept")
      continue
    partial = path + ".partial"
    with open(partial, "wb") as f:
      f.write(data)
    os.replace(partial, path)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--check", metavar="DIR")
  args = parser.parse_args()
  folder = args.check or CACHE
  if not args.check:
    fetch(folder)
  bad = check(folder)
  for line in bad:
    print(line)
  print(f"{folder}: " + ("every file is there and matches" if not bad else
                         f"{len(bad)} file(s) missing or differing"))
  if not args.check and not bad:   # the tests read the cache from now on
    with open(os.path.join(folder, ".complete"), "w", encoding="utf-8"):
      pass
  sys.exit(1 if bad else 0)


if __name__ == "__main__":
  main()
