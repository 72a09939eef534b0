"""What every t2t-* command shares: the flags several commands take (each
defined once, here), quiet logs, user registrations, and user mistakes
(``t2t_keras.errors.UserError``) printed as one line instead of a traceback;
any other exception is a bug and keeps its traceback.

``--output_dir`` is a training run's directory in every command (t2t-trainer
writes it, the others read it), as in tensor2tensor."""

import errno
import os
import signal
import sys

from absl import app
from absl import flags

# The flags several commands share, defined once: name -> (kind, help).
SHARED = {
    "problem": ("string", "Registered problem name."),
    "data_dir": ("string", "Directory of the problem's data (vocabulary and "
                 "shards)."),
    "output_dir": ("string", "The training run's directory (t2t-trainer "
                   "writes checkpoints, hparams.json and model.json there)."),
    "hparams_set": ("string", "Registered hparams set name (a command that "
                    "reads a run checks it against the run's)."),
    "hparams": ("string", "Overrides, e.g. 'hidden_size=256,pos=emb'."),
    "model": ("string", "Registered model name (a command that reads a run "
              "checks it against the run's)."),
    "xla": ("bool", "Compile the search with XLA: one compiled program a "
            "batch shape (kept in $T2T_KERAS_CACHE/tf_xla for later runs), "
            "the same outputs, fewer ops a step. t2t-exporter: "
            "the SavedModel's search carries XLA's must-compile mark; TF "
            "Serving runs it with --xla_cpu_compilation_enabled (CPU) or "
            "--xla_gpu_compilation_enabled (GPU), which are off by default "
            "there."),
    "decode_from_file": ("string", "Source sentences, one per line "
                         "(t2t-decoder: default stdin)."),
    "vocab_size": ("integer", "Subword vocabulary size (t2t-datagen: "
                   "default the problem's; t2t-analyze: both sides)."),
}


def define(*names, **defaults):
  """Defines the shared flags ``names`` and those ``defaults`` names, with
  the defaults given (else None; "" for --hparams) and SHARED's help."""
  for name in list(names) + [n for n in defaults if n not in names]:
    kind, text = SHARED[name]
    default = defaults.get(name, "" if name == "hparams" else None)
    getattr(flags, f"DEFINE_{kind}")(name, default, text)


flags.DEFINE_string("t2t_usr_dir", None,
                    "A directory of your own registrations to import.")
flags.DEFINE_bool("gpu_memory_growth", False,
                  "Let TensorFlow take GPU memory as it needs it instead of "
                  "all of every visible GPU at start: for a GPU shared with "
                  "another process (a decoder beside a trainer).")
flags.DEFINE_bool("registry_help", False, "List what is registered and exit.")
flags.DEFINE_bool("tf_logs", False,
                  "Show TensorFlow's C++ start-up and log lines (hidden by "
                  "default; read from the command line before the import).")


# The flags that name a registration, and the registry kind each names.
NAMES = {"problem": "problem", "model": "model", "hparams_set": "hparams"}


def setup(argv, tensorflow=True, modes=None, backends=("tensorflow",)):
  """Checks the command line: a flag that the command's ``modes``
  (``modes.Modes``) would ignore, and the registry names of the NAMES flags
  the command defines (and its --hparams overrides, where it defines them),
  before TensorFlow is imported, so that a mistake is answered at once;
  the KERAS_BACKEND against the command's ``backends``; imports TensorFlow
  quietly for a command that uses it, then --t2t_usr_dir. Returns True
  when --registry_help was asked for (and printed), so the command should
  end."""
  from absl import logging
  logging.set_verbosity(logging.WARNING)
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
  if modes is not None:
    modes.check(flags.FLAGS)
  from t2t_keras import registry
  if not flags.FLAGS.t2t_usr_dir:   # a user's names need their import
    given = {name: flags.FLAGS[name].value for name in NAMES
             if name in flags.FLAGS and flags.FLAGS[name].value}
    for name, value in given.items():
      registry.check_name(NAMES[name], value)
    if "hparams_set" in given and "hparams" in flags.FLAGS:
      # The overrides as the command will apply them (no TensorFlow).
      hparams = registry.hparams(given["hparams_set"]).parse(
          flags.FLAGS.hparams)
      from t2t_keras import hparam_ranges
      hparam_ranges.check(hparams.values(), hparam_ranges.MODEL, "--hparams")
      if "problem" in given and flags.FLAGS["data_dir"].value:
        hparam_ranges.check_batch_size(
            hparams.batch_size, flags.FLAGS.data_dir, given["problem"])
  check_ranges(flags.FLAGS)
  if tensorflow:
    check_backend(os.environ, backends)
    gpu_environment(flags.FLAGS.gpu_memory_growth, os.environ)
    if "xla" in flags.FLAGS and flags.FLAGS.xla:
      from t2t_keras.io.cache import keep_xla_programs
      unusable = keep_xla_programs(os.environ)
      if unusable:
        print(unusable, file=sys.stderr, flush=True)
    # Imported for its side effect: TensorFlow, imported quietly.
    from t2t_keras.bin import quiet_tensorflow  # noqa: F401
  registry.import_usr_dir(flags.FLAGS.t2t_usr_dir)
  if flags.FLAGS.registry_help:
    print(registry.help_string())
    return True
  return False


def check_ranges(flag_values):
  """The numbers in --hparams and the decode hparams flags, against their
  ranges (``hparam_ranges``), before TensorFlow is imported; a beam wider
  than the run's target vocabulary (its model.json) too."""
  from t2t_keras import hparam_ranges
  if "hparams" in flag_values:
    hparam_ranges.check_overrides(flag_values.hparams, hparam_ranges.MODEL,
                                  "--hparams")
  for name in ("decode_hparams", "eval_decode_hparams"):
    if name in flag_values:
      hparam_ranges.check_overrides(flag_values[name].value,
                                    hparam_ranges.DECODE, f"--{name}")
  if "decode_hparams" in flag_values and "output_dir" in flag_values:
    hparam_ranges.check_beam(flag_values.decode_hparams,
                             flag_values.output_dir)


def gpu_environment(memory_growth, environ):
  """``--gpu_memory_growth`` as TensorFlow's own switch, read when it starts
  a GPU (its GPU guide's TF_FORCE_GPU_ALLOW_GROWTH), in ``environ``."""
  if memory_growth:
    environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"


def check_backend(environ, backends=("tensorflow",)):
  """The t2t-* commands run TensorFlow graphs (tf.data, SavedModels,
  checkpoints): a KERAS_BACKEND other than the command's ``backends`` is
  refused in one line, before Keras reads it (t2t-decoder also decodes a
  checkpoint on JAX)."""
  backend = environ.get("KERAS_BACKEND", "tensorflow")
  if backend not in backends:
    from t2t_keras.errors import UserError
    raise UserError(
        f"KERAS_BACKEND={backend}: the t2t-* commands run on TensorFlow "
        "(t2t-decoder on jax too); unset KERAS_BACKEND (or set it to "
        "tensorflow). The library's layers and models run on JAX from "
        "Python (docs/library.md)")


def require(flag_values, *names):
  missing = [n for n in names if not getattr(flag_values, n)]
  if missing:
    raise app.UsageError("missing required flag(s): " +
                         ", ".join(f"--{n}" for n in missing))


def flag_values(flag_values_obj):
  """The command's own flags (not absl's) as a dict, for model.json."""
  return {f.name: f.value
          for module, defined in flag_values_obj.flags_by_module_dict().items()
          if not module.startswith("absl") for f in defined}


class ClosedStream:
  """Stands for a standard stream the command was started without
  (``<&-``, ``>&-``): any use of it is a one-line error naming it; flushing
  it (as Python does at exit) does nothing."""

  def __init__(self, name, remedy):
    self.name, self.remedy = name, remedy

  def flush(self):
    pass

  def close(self):
    pass

  def __getattr__(self, attribute):
    from t2t_keras.errors import UserError
    raise UserError(f"standard {self.name} is closed; {self.remedy}")


def standard_streams():
  """Puts a ``ClosedStream`` where the command has no stdin or stdout."""
  if sys.stdin is None:
    sys.stdin = ClosedStream("input", "give the input as a file flag "
                                      "(t2t-decoder: --decode_from_file) or "
                                      "a pipe")
  if sys.stdout is None:
    sys.stdout = ClosedStream("output", "redirect it to a file (t2t-decoder: "
                                        "or give --decode_to_file)")


# The errnos of a write that found no room.
STREAM_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def reader_gone():
  """Standard output's reader went away (``| head -1``): the command ends as
  a filter does on SIGPIPE, exit 141 and nothing said. Its stdout then
  points at /dev/null, so that Python's last flush finds no pipe."""
  devnull = os.open(os.devnull, os.O_WRONLY)
  os.dup2(devnull, sys.stdout.fileno())
  os.close(devnull)
  return 128 + signal.SIGPIPE


def run(main, tensorflow=True, modes=None, backends=("tensorflow",)):
  """Every command's entry: absl's app.run of ``main()`` after ``setup``
  (``--registry_help`` ends there), with user mistakes (a UserError, a
  UsageError, an OSError on a named file) printed as one line and exit
  code 2, and SIGINT, SIGTERM or SIGHUP as one line and exit code 128 +
  its number. A reader of stdout that goes away (``| head``) ends it as a
  filter ends, exit 141 and nothing said; a closed stdin or stdout is one
  line when used. ``tensorflow``: the command uses TensorFlow (imported after the
  command line is checked); ``modes``: what each of its modes reads;
  ``backends``: the KERAS_BACKEND values it runs under."""
  from t2t_keras.errors import (Interrupted, UserError, catch_lost_signals,
                                note_signal, signal_received)

  def stop(signum, frame):
    del frame
    note_signal(signum)    # for errors.check_signals, should this be lost
    raise Interrupted(signum)

  def guarded(argv):
    # SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl-C does, so
    # that temporary outputs go.
    # (Under nohup SIGHUP stays ignored.)
    signal.signal(signal.SIGTERM, stop)
    catch_lost_signals()   # one raised inside a GC callback: not lost
    if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
      signal.signal(signal.SIGHUP, stop)
    standard_streams()
    try:
      if setup(argv, tensorflow, modes, backends):
        return 0
      code = main()
      sys.stdout.flush()    # a reader gone shows here, not at exit
      return code
    except BrokenPipeError:
      return reader_gone()
    except KeyboardInterrupt:
      return interrupted(signal.SIGINT)
    except Interrupted as e:       # it may say more (where training stopped)
      return interrupted(e.signum, e)
    except Exception as e:
      if signal_received() is not None:
        # The signal's exception, raised inside a C++ call (TensorFlow's
        # SavedModel writer, through pybind11), can come out as another
        # type ("MISMATCH of original and normalized active exception
        # types"); it unwound the same cleanups on the way.
        return interrupted(signal_received())
      if isinstance(e, (UserError, app.UsageError)):
        print(f"error: {e}", file=sys.stderr)
        return 2
      if isinstance(e, OSError) and e.filename is not None:  # a named file
        print(f"error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
      if isinstance(e, OSError) and e.errno in STREAM_FULL:
        # Standard output on a full device (> /dev/full, a full disk):
        # said once; Python's own flush at exit then finds /dev/null.
        print(f"error: could not write standard output: {e.strerror} (the "
              "disk is full, or a file-size limit was reached)",
              file=sys.stderr)
        reader_gone()
        return 2
      raise

  def interrupted(signum, error=None):
    print(f"error: {error or Interrupted(signum)}", file=sys.stderr)
    return 128 + signum

  app.run(guarded, flags_parser=_parse_flags)


def _parse_flags(argv):
  """absl's flag parsing, with a flag it cannot read (``--train_steps=abc``,
  an unknown name, with absl's suggestion) one line and exit code 2."""
  try:
    parsed = flags.FLAGS(argv)
  except flags.Error as e:
    said = " ".join(str(e).split())
    print(f"error: {os.path.basename(argv[0])}: {said}", file=sys.stderr)
    sys.exit(2)
  for name, value in flags.FLAGS.flag_values_dict().items():
    # absl's bounds let NaN through (every comparison with it is False).
    if isinstance(value, float) and value != value:
      print(f"error: {os.path.basename(argv[0])}: --{name}={value} is "
            "not a number; expected a number", file=sys.stderr)
      sys.exit(2)
  return parsed
