"""Running a t2t-* command as a user does (a subprocess), for the tests."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def t2t_command(name, *args, env=None):
  """Runs ``python -m t2t_keras.bin.<name> args``; returns the
  CompletedProcess (text stdout and stderr)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3") if env is None else env
  return subprocess.run(
      [sys.executable, "-m", f"t2t_keras.bin.{name}", *args],
      capture_output=True, text=True, cwd=REPO, env=env, timeout=600,
      check=False)
