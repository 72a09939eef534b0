"""The tests' prefork server (tests/prefork.py) stands in for a fresh
``python``: the same exit code, signal, streams, directory and
environment; a killed client takes its command with it; what it cannot
stand in for runs fresh."""

import os
import signal
import subprocess
import time

import pytest

from commands import python
from prefork import FORWARDED, SOCKET_VARIABLE

IMPORTED = "import sys; print('tensorflow' in sys.modules)"


@pytest.fixture(autouse=True)
def _server():
  if os.environ.get(SOCKET_VARIABLE, "off") == "off":
    pytest.skip("no prefork server (T2T_TEST_PREFORK=off)")


def _run(*args, env=None, **kwargs):
  return subprocess.run(python(*args), capture_output=True, text=True,
                        env=env, timeout=120, check=False, **kwargs)


def test_streams_exit_code_directory_and_environment(tmp_path):
  code = ("import os, sys; data = sys.stdin.read(); "
          "print(data.upper(), os.getcwd(), os.environ['ASKED'], sys.argv); "
          "print('to stderr', file=sys.stderr); sys.exit(3)")
  done = _run("-c", code, "a b", input="piped\n", cwd=str(tmp_path),
              env=dict(os.environ, ASKED="yes"))
  assert done.returncode == 3
  assert done.stdout == f"PIPED\n {tmp_path} yes ['-c', 'a b']\n"
  assert done.stderr == "to stderr\n"
  assert _run("-c", IMPORTED).stdout == "True\n"     # the server's child


def test_uncaught_exception_and_signal(tmp_path):
  failed = _run("-c", "raise ValueError('bad')")
  assert failed.returncode == 1 and "ValueError: bad" in failed.stderr
  killed = _run("-c", "import os, signal; os.kill(os.getpid(), "
                "signal.SIGTERM)")
  assert killed.returncode == -signal.SIGTERM
  script = tmp_path / "script.py"
  script.write_text("import sys; print(sys.argv[1:], __name__)\n")
  assert _run(str(script), "x").stdout == "['x'] __main__\n"


def test_killed_client_takes_the_command_with_it(tmp_path):
  pid_file = tmp_path / "pid"
  client = subprocess.Popen(python(
      "-c", f"import os, time; open({str(pid_file)!r}, 'w').write("
      "str(os.getpid())); time.sleep(120)"))
  deadline = time.time() + 60
  while not (pid_file.exists() and pid_file.read_text()):
    assert time.time() < deadline and client.poll() is None
    time.sleep(0.02)
  command = int(pid_file.read_text())
  client.kill()
  client.wait()
  deadline = time.time() + 10
  while os.path.exists(f"/proc/{command}") and time.time() < deadline:
    time.sleep(0.02)
  assert not os.path.exists(f"/proc/{command}")


def test_start_variables_and_tf_logs_run_fresh():
  other = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")
  assert _run("-c", IMPORTED, env=other).stdout == "False\n"
  assert _run("-c", IMPORTED, "--tf_logs").stdout == "False\n"


def test_a_commands_own_python_runs_through_the_server():
  code = ("import subprocess, sys; print(subprocess.run([sys.executable, "
          f"'-c', {IMPORTED!r}], capture_output=True, text=True).stdout, "
          "end='')")
  assert _run("-c", code).stdout == "True\n"


def test_signals_reach_the_command_and_ignored_ones_stay_ignored(tmp_path):
  """SIGTERM and SIGINT sent to the client reach the command's handlers;
  a signal the client started ignoring is ignored by the command too."""
  ready = tmp_path / "ready"
  code = ("import os, signal, sys, time\n"
          "signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n"
          "print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN, "
          "flush=True)\n"
          f"open({str(ready)!r}, 'w').close()\n"
          "try:\n  time.sleep(120)\nexcept KeyboardInterrupt:\n  sys.exit(5)\n")

  def started(signum, ignore=()):
    ready.unlink(missing_ok=True)

    def ignoring():
      # From the defaults, whatever this suite inherited (under nohup,
      # SIGHUP starts ignored; in a script's `pytest ... &`, SIGINT).
      for s in FORWARDED:
        signal.signal(s, signal.SIG_DFL)
      for s in ignore:
        signal.signal(s, signal.SIG_IGN)
    client = subprocess.Popen(python("-c", code), stdout=subprocess.PIPE,
                              text=True, preexec_fn=ignoring)
    deadline = time.time() + 60
    while not ready.exists():
      assert time.time() < deadline and client.poll() is None
      time.sleep(0.02)
    client.send_signal(signum)
    return client.communicate(timeout=60)[0], client.returncode

  assert started(signal.SIGTERM) == ("False\n", 7)
  assert started(signal.SIGINT) == ("False\n", 5)
  assert started(signal.SIGTERM, ignore=[signal.SIGHUP]) == ("True\n", 7)


def test_closed_streams_and_the_file_size_limit(tmp_path):
  """A stream the client has closed is None in the command, as in a fresh
  python; the client's file-size limit holds in the command."""
  import resource
  code = ("import sys; print(sys.stdout is None, file=sys.stderr); "
          f"f = open({str(tmp_path / 'big')!r}, 'wb', buffering=0); "
          "[f.write(b'x' * 2048) for _ in range(3)]")

  def limited():
    os.close(1)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
  done = subprocess.run(python("-c", code), stderr=subprocess.PIPE,
                        text=True, timeout=120, check=False,
                        preexec_fn=limited)
  assert done.stderr.splitlines()[0] == "True", done.stderr
  assert "File too large" in done.stderr, done.stderr
  assert done.returncode == 1
