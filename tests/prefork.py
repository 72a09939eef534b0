"""Python processes for the tests' commands without TensorFlow's start-up
each time: a server that has imported TensorFlow and the library forks a
child for each command, which runs it as ``python ARGS`` would.

Every t2t-* command a test starts used to spend about 6 s of a 2-core
machine importing TensorFlow, Keras and the library before its first line
of work; the suite starts about a hundred. Here one server per pytest
worker pays that once.

- ``python prefork.py serve SOCKET`` is the server: it listens on the Unix
  socket SOCKET, imports what the commands import (as a command does:
  ``t2t_keras.bin.quiet_tensorflow``), and never runs a TensorFlow op, so
  a child starts with no TensorFlow runtime, as a fresh process does (its
  own thread counts, logical CPU devices and seeds).
- ``python prefork.py ARGS`` (``ARGS`` as for ``python``: ``-m module
  ...``, ``-c code ...`` or ``script ...``) is the client: it hands the
  server its standard input, output and error, its environment and working
  directory, waits, and exits as the command did (the same exit code, or
  the same signal). Killed, it takes the command with it.
- A command's ``sys.executable`` is a ``python`` beside SOCKET that runs
  through the server too, so that the benchmarks' and recipes' own
  ``sys.executable -m t2t_keras.bin...`` commands start the same way.
- The child is the client's process as a fresh one would be: its
  standard streams (a closed one closed), its limit on file sizes, its
  ignored signals; the termination signals the client gets (SIGTERM,
  SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2) are passed on to the command.
  Only its pid differs.
- The client runs a fresh ``python ARGS`` instead where the server cannot
  stand in: without a server (``T2T_TEST_PREFORK`` unset, or
  ``T2T_TEST_PREFORK=off`` to run the suite in fresh processes), where an
  environment variable read at the interpreter's or TensorFlow's start
  differs from the server's (``START_VARIABLES``), and for ``--tf_logs``
  (TensorFlow's start-up lines are printed once, by the server).

Only the standard library is imported by the client, which starts in
about 40 ms.
"""

import json
import os
import select
import signal
import socket
import sys

SOCKET_VARIABLE = "T2T_TEST_PREFORK"
# Read when the interpreter or TensorFlow starts, so the server's values
# hold in a child: a request that sets them otherwise runs fresh.
START_VARIABLES = ("PYTHON", "LC_", "LANG", "TF_CPP", "TF_ENABLE", "KERAS_",
                   "XLA_", "CUDA_", "OMP_", "MKL_", "T2T_NATIVE_LOGS",
                   "TF_NUM_", "TF_XLA")
# What a t2t-* command imports before its work; nothing that defines flags.
PREIMPORT = ("t2t_keras.bin.quiet_tensorflow", "keras",
             "t2t_keras.training.run", "t2t_keras.decoding.run",
             "t2t_keras.export.run", "t2t_keras.data.datagen",
             "t2t_keras.analysis", "t2t_keras.metrics", "sentencepiece",
             "sacrebleu")


# Passed on from the client to its command; ignored in the command where
# the client started with them ignored (a script's `cmd &`, nohup).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
             signal.SIGUSR1, signal.SIGUSR2)


def write_shim(path, *args):
  """Writes the executable ``path``: ``python prefork.py args "$@"``."""
  words = " ".join(f'"{a}"' for a in (sys.executable,
                                       os.path.abspath(__file__), *args))
  with open(path, "w", encoding="utf-8") as f:
    f.write(f'#!/bin/sh\nexec {words} "$@"\n')
  os.chmod(path, 0o755)


def _start_environment(environment):
  return {k: v for k, v in environment.items()
          if k.startswith(START_VARIABLES)}


def _runs_fresh(request, server_start):
  return (_start_environment(request["env"]) != server_start or
          any(a == "--tf_logs" or a.startswith("--tf_logs=")
              for a in request["argv"]))


def _run_python(argv):
  """Runs ``python argv`` in this process and returns its exit code."""
  import runpy
  import traceback
  try:
    if argv[0] == "-m":
      sys.argv = [argv[1]] + argv[2:]   # runpy puts the file name first
      sys.path[0] = os.getcwd()
      runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
      sys.argv = ["-c"] + argv[2:]
      sys.path[0] = ""
      exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
      sys.argv = list(argv)
      sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
      runpy.run_path(argv[0], run_name="__main__")
    return 0
  except SystemExit as e:
    if e.code is None or isinstance(e.code, int):
      return e.code or 0
    print(e.code, file=sys.stderr)
    return 1
  except BaseException:
    traceback.print_exc()
    return 1


def _client_state():
  """What of this process a command must inherit: which standard streams
  are open, its file-size limit, the forwarded signals it ignores."""
  import resource
  opened = []
  for fd in (0, 1, 2):
    try:
      os.fstat(fd)
      opened.append(fd)
    except OSError:
      pass
  return {"streams": opened,
          "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
          "ignored": [int(s) for s in FORWARDED
                      if signal.getsignal(s) == signal.SIG_IGN]}


def _become_command(request, fds):
  """In the command's process: its file descriptors, directory,
  environment, file-size limit and signal dispositions, fresh standard
  streams (None for a closed one, as Python gives), then the command;
  never returns."""
  import atexit
  import io
  import resource
  given = dict(zip(request["streams"], fds))
  for target in (0, 1, 2):
    if target in given:
      os.dup2(given[target], target)
      os.close(given[target])
    else:
      os.close(target)
  os.chdir(request["cwd"])
  os.environ.clear()
  os.environ.update(request["env"])
  resource.setrlimit(resource.RLIMIT_FSIZE, tuple(request["fsize"]))
  for signum in FORWARDED:
    signal.signal(signum, signal.SIG_IGN if signum in request["ignored"] else
                  signal.default_int_handler if signum == signal.SIGINT else
                  signal.SIG_DFL)
  streams = []
  for fd, old in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
    if fd not in given:
      streams.append(None)
      continue
    raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
    buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
    streams.append(io.TextIOWrapper(
        buffered, encoding=old.encoding, errors=old.errors,
        line_buffering=fd == 1 and os.isatty(1), write_through=fd == 2))
  sys.stdin, sys.stdout, sys.stderr = streams
  sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
  sys.executable = request["python"]   # what the command starts: through here
  code = _run_python(request["argv"])
  try:
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
      if stream is not None:
        stream.flush()
  finally:
    os._exit(code if 0 <= code < 256 else 1)


def _handle(connection, server_start, python):
  """In a process forked for one request: answers ``fresh``, or forks the
  command, tells its pid (``pid N``) and how it ended (``exit N``); kills
  it if the client goes away first. Never returns."""
  message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
  request = dict(json.loads(message.decode("utf-8")), python=python)
  if _runs_fresh(request, server_start):
    connection.sendall(b"fresh\n")
    os._exit(0)
  signal.signal(signal.SIGCHLD, signal.SIG_DFL)
  pid = os.fork()
  if pid == 0:
    connection.close()
    _become_command(request, fds)
  for fd in fds:
    os.close(fd)
  connection.sendall(f"pid {pid}\n".encode())
  ended = os.pidfd_open(pid)
  readable, _, _ = select.select([connection, ended], [], [])
  if ended not in readable:   # the client hung up (killed): so is it
    os.kill(pid, signal.SIGKILL)
  _, status = os.waitpid(pid, 0)
  try:
    connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
  except OSError:
    pass
  os._exit(0)


def serve(path):
  """Listens on ``path`` at once (clients queue), imports, then forks a
  handler for each connection. Runs until killed."""
  import importlib
  listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  listener.bind(path)
  listener.listen(64)
  sys.argv = [sys.argv[0]]          # quiet_tensorflow reads --tf_logs here
  for name in PREIMPORT:
    importlib.import_module(name)
  server_start = _start_environment(os.environ)
  python = os.path.join(os.path.dirname(os.path.abspath(path)), "python")
  write_shim(python)
  signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # handlers reap themselves
  while True:
    connection, _ = listener.accept()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
      listener.close()
      _handle(connection, server_start, python)
    connection.close()


def _fresh(argv):
  try:   # a test may have closed standard output (or started without one)
    sys.stdout.flush()
  except (AttributeError, OSError, ValueError):
    pass
  os.execv(sys.executable, [sys.executable] + argv)


def client(argv):
  """Runs ``python argv`` through the server; exits as the command did."""
  path = os.environ.get(SOCKET_VARIABLE, "off")
  if path == "off" or not os.path.exists(path):
    _fresh(argv)
  state = _client_state()   # before the socket takes a closed stream's fd
  connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  try:
    connection.connect(path)
  except OSError:
    _fresh(argv)
  request = dict(state, argv=argv, env=dict(os.environ),
                 cwd=os.getcwd())
  socket.send_fds(connection, [json.dumps(request).encode("utf-8")],
                  request["streams"])
  replies = connection.makefile("rb")
  answer = replies.readline()
  if answer == b"fresh\n":
    _fresh(argv)
  if answer.startswith(b"pid "):
    pid = int(answer.split()[1])
    for signum in FORWARDED:
      if signum not in request["ignored"]:
        signal.signal(signum, lambda s, _: os.kill(pid, s))
    answer = replies.readline()
  if not answer.startswith(b"exit "):
    sys.exit("prefork: the server ended before the command did")
  code = int(answer.split()[1])
  if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
  sys.exit(code)


if __name__ == "__main__":
  if sys.argv[1:2] == ["serve"]:
    serve(sys.argv[2])
  else:
    client(sys.argv[1:])
