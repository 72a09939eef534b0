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


def lines_in_every_backend(common, source, folder, jax_env=None):
  """{mode: output lines} of ``source`` decoded by t2t-decoder with the
  flags ``common`` (a run's, decode hparams included) on the TensorFlow
  graph ("graph"), with --xla ("xla"), under KERAS_BACKEND=jax ("jax", a
  fresh interpreter, ``jax_env`` added to its environment) and through
  the SavedModel t2t-exporter writes with the same flags ("saved_model");
  each command must succeed. ``folder``: a pathlib folder for the
  outputs."""
  outputs = {}
  for mode, extra in (("graph", []), ("xla", ["--xla"])):
    target = folder / f"{mode}.txt"
    done = t2t_command("t2t_decoder", *common, *extra,
                       f"--decode_from_file={source}",
                       f"--decode_to_file={target}")
    assert done.returncode == 0, done.stderr[-3000:]
    outputs[mode] = target.read_text(encoding="utf-8").splitlines()
  target = folder / "jax.txt"
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
             TF_CPP_MIN_LOG_LEVEL="3", **(jax_env or {}))
  done = subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_decoder", *common,
       f"--decode_from_file={source}", f"--decode_to_file={target}"],
      capture_output=True, text=True, env=env, timeout=600, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  outputs["jax"] = target.read_text(encoding="utf-8").splitlines()
  export = t2t_command("t2t_exporter", *common,
                       f"--export_dir={folder / 'export'}",
                       "--export_version=1")
  assert export.returncode == 0, export.stderr[-3000:]
  served = t2t_command("t2t_decoder",
                       f"--saved_model_dir={folder / 'export' / '1'}",
                       f"--decode_from_file={source}")
  assert served.returncode == 0, served.stderr[-3000:]
  outputs["saved_model"] = served.stdout.splitlines()
  return outputs
