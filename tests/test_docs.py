"""The README and docs/ keep scripts/check_docs.py's limits, and the check
finds what it is for."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(REPO, "scripts", "check_docs.py")


def _check(root):
  return subprocess.run([sys.executable, CHECK, str(root)],
                        capture_output=True, text=True, timeout=60,
                        check=False)


def test_the_docs_keep_their_limits():
  done = _check(REPO)
  assert done.returncode == 0, done.stdout
  assert "within the limits" in done.stdout


def test_the_check_finds_each_kind_of_fault(tmp_path):
  (tmp_path / "docs").mkdir()
  long_prose = "word " * 30
  (tmp_path / "README.md").write_text(
      "# Title\n\n" + long_prose + "\n\n```\n" + "x" * 200 + "\n```\n\n| " +
      "y" * 200 + " |\n\nThis session we measured 40.1.\n"
      "[a](docs/page.md#a-heading) [b](docs/page.md#no-such) [c](gone.md)\n",
      encoding="utf-8")
  (tmp_path / "docs" / "page.md").write_text(
      "# Page\n\n## A heading\n" + "line\n" * 1820, encoding="utf-8")
  done = _check(tmp_path)
  assert done.returncode == 1
  found = done.stdout.splitlines()
  assert found == [
      "README.md:3: a prose line of 150 characters, over 120",
      "README.md:11: 'This session' dates the page or names who measured: "
      "say what the command does and on which CPU",
      "README.md:12: a link to docs/page.md#no-such: docs/page.md has no "
      "heading #no-such",
      "README.md:12: a link to gone.md, which does not exist",
      "docs/page.md: 1823 lines, over 400",
      "README.md and docs/*.md: 1835 lines in all, over 1820"], found
