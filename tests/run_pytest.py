"""Runs tests through pytest: the Bazel py_test entry point. With
arguments, pytest gets them (one target per test file); without, it runs
every test beside this file."""

import os
import sys

import pytest

if __name__ == "__main__":
  here = os.path.dirname(os.path.abspath(__file__))
  sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] +
                       (sys.argv[1:] or [here])))
