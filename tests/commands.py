"""Running a t2t-* command as a user does (a subprocess), for the tests.

``python(args)`` is the command line ``python args`` runs through the
pytest worker's prefork server (tests/prefork.py), which has TensorFlow
imported already; it falls back to a fresh interpreter where that server
cannot stand in. ``T2T_TEST_PREFORK=off`` runs every command fresh."""

import os
import subprocess
import sys

import prefork

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFORK = os.path.join(REPO, "tests", "prefork.py")


def python(*args):
  """The argv of ``python args``, through the prefork server."""
  return [sys.executable, PREFORK, *args]


def t2t_command(name, *args, env=None):
  """Runs ``python -m t2t_keras.bin.<name> args``; returns the
  CompletedProcess (text stdout and stderr)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3") if env is None else env
  return subprocess.run(
      python("-m", f"t2t_keras.bin.{name}", *args),
      capture_output=True, text=True, cwd=REPO, env=env, timeout=600,
      check=False)


def command_shims(folder):
  """Writes, in ``folder``, a ``t2t-*`` executable for each command this
  environment installs, which runs it through the prefork server; returns
  ``folder``, to go first on a recipe's PATH."""
  os.makedirs(folder, exist_ok=True)
  bin_dir = os.path.dirname(sys.executable)
  for name in sorted(os.listdir(bin_dir)):
    if not name.startswith("t2t-"):
      continue
    prefork.write_shim(os.path.join(folder, name), "-m",
                       "t2t_keras.bin." + name.replace("-", "_"))
  return folder
