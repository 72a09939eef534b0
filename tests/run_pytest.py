"""Runs the test suite through pytest (the Bazel py_test entry point)."""

import os
import sys

import pytest

if __name__ == "__main__":
  sys.exit(pytest.main(["-q", os.path.dirname(os.path.abspath(__file__))]
                       + sys.argv[1:]))
