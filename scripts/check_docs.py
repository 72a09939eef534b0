"""Checks the limits the README and docs/ keep, so that they stay reference
pages a newcomer reads:

- no page over 400 lines, and README.md + docs/*.md at most 1,820 in all;
- no prose line over 120 characters (fenced code and table rows aside);
- no sentence about who measured what, or when (``STALE`` phrases);
- every relative link names a file that exists and, after ``#``, a heading
  in it.

  python scripts/check_docs.py [ROOT]

Prints one line per finding and exits 1 if there is any, else prints a
summary and exits 0. CI runs it through tests/test_docs.py.
"""

import glob
import os
import re
import sys

MAX_PAGE_LINES = 400
MAX_TOTAL_LINES = 1820
MAX_PROSE_CHARS = 120
# Phrases that date a page or name who did something: a figure belongs to
# a command and a CPU, not to a session.
STALE = re.compile(
    r"\b(this session|last session|the session before|another session|"
    r"yesterday|today|we measured|I measured|I ran|we ran|"
    r"at the time of writing|as of (?:now|this))\b", re.IGNORECASE)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages(root):
  """README.md and docs/*.md under ``root``, sorted."""
  found = [os.path.join(root, "README.md")]
  found += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
  return [p for p in found if os.path.isfile(p)]


def slug(heading):
  """A heading's anchor as GitHub makes it."""
  text = heading.strip().lower()
  text = re.sub(r"[^\w\- ]", "", text)
  return text.replace(" ", "-")


def anchors(path):
  with open(path, encoding="utf-8") as f:
    return {slug(line.lstrip("#")) for line in f
            if line.startswith("#") and not line.startswith("#!")}


def prose_lines(lines):
  """(number, line) of the lines outside fenced code and tables."""
  fenced = False
  for number, line in enumerate(lines, 1):
    if line.lstrip().startswith("```"):
      fenced = not fenced
      continue
    if fenced or line.lstrip().startswith("|"):
      continue
    yield number, line


def check(root):
  """The findings, one string each."""
  findings, total = [], 0
  for path in pages(root):
    name = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
      lines = f.read().splitlines()
    total += len(lines)
    if len(lines) > MAX_PAGE_LINES:
      findings.append(f"{name}: {len(lines)} lines, over {MAX_PAGE_LINES}")
    for number, line in prose_lines(lines):
      if len(line) > MAX_PROSE_CHARS:
        findings.append(f"{name}:{number}: a prose line of {len(line)} "
                        f"characters, over {MAX_PROSE_CHARS}")
      stale = STALE.search(line)
      if stale:
        findings.append(f"{name}:{number}: {stale.group(0)!r} dates the "
                        "page or names who measured: say what the command "
                        "does and on which CPU")
      for target in _LINK.findall(line):
        findings.extend(_check_link(root, path, name, number, target))
  if total > MAX_TOTAL_LINES:
    findings.append(f"README.md and docs/*.md: {total} lines in all, over "
                    f"{MAX_TOTAL_LINES}")
  return findings, total


def _check_link(root, path, name, number, target):
  if re.match(r"[a-z]+:", target):
    return []                   # https:, mailto:
  file_part, _, anchor = target.partition("#")
  linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
      if file_part else path
  if not os.path.exists(linked):
    return [f"{name}:{number}: a link to {target}, which does not exist"]
  if anchor and linked.endswith(".md") and anchor not in anchors(linked):
    return [f"{name}:{number}: a link to {target}: "
            f"{os.path.relpath(linked, root)} has no heading #{anchor}"]
  return []


def main(argv):
  root = argv[1] if len(argv) > 1 else os.path.dirname(
      os.path.dirname(os.path.abspath(__file__)))
  findings, total = check(root)
  for finding in findings:
    print(finding)
  if findings:
    return 1
  print(f"docs: {len(pages(root))} pages, {total} lines, within the limits")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
