"""Every ``t2t-*`` command once in a fresh process, without the fork
server (tests/prefork.py, whose pre-imported modules could hide a missing
import): its console script, as pip installed it, imports its module and
prints its flags. CI's quickstart runs t2t-datagen, t2t-trainer,
t2t-decoder, t2t-bleu and t2t-exporter fresh end to end as well."""

import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _commands():
  with open(os.path.join(REPO, "setup.py"), encoding="utf-8") as f:
    return re.findall(r'"(t2t-[a-z-]+)": "(t2t_keras\.bin\.\w+):run"',
                      f.read())


def test_setup_names_ten_commands():
  assert len(_commands()) == 10, _commands()


@pytest.mark.parametrize("command,module", _commands())
def test_each_command_starts_fresh(command, module):
  env = {k: v for k, v in os.environ.items() if k != "T2T_TEST_PREFORK"}
  script = shutil.which(command) or shutil.which(
      command, path=os.path.dirname(sys.executable))
  argv = [script] if script else [sys.executable, "-m", module]
  # absl's help lists the flags under their modules' names, and exits 1.
  done = subprocess.run(argv + ["--helpfull"], capture_output=True,
                        text=True, env=env, timeout=120, check=False)
  assert done.returncode in (0, 1) and "t2t_keras.bin.common:" in \
      done.stdout and \
      "Traceback" not in done.stderr, done.stdout[-1000:] + done.stderr[-2000:]
  # Its main module's imports, run for real (not only what --help needs).
  imported = subprocess.run(
      [sys.executable, "-c", f"import {module}"], capture_output=True,
      text=True, env=env, timeout=120, check=False)
  assert imported.returncode == 0, imported.stderr[-2000:]
