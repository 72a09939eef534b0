"""Every t2t-* command refuses a flag its mode would ignore: every command x
mode x flag in one process a command (``modes.Modes.unread``), then the
ignored-flag cases users meet, run as commands (exit 2, one line)."""

import json
import subprocess
import sys

import pytest

from commands import REPO, t2t_command as command
from t2t_keras.bin import modes

COMMANDS = ["t2t_analyze", "t2t_attention", "t2t_avg_all", "t2t_bleu",
            "t2t_datagen", "t2t_decoder", "t2t_evalb", "t2t_exporter",
            "t2t_import", "t2t_trainer"]

# Every command x mode x flag: the command's module imported (it defines
# its flags and MODES; no TensorFlow), each mode made active by its example
# (additive modes each on, then all off), then each flag the command
# defines given once more on that command line.
ENUMERATE = r"""
import json, sys, importlib
from absl import flags
from t2t_keras.bin import modes
module = importlib.import_module("t2t_keras.bin." + sys.argv[1])
table, F = module.MODES, flags.FLAGS
defined = table.defined(F)

def value(name):
  flag = F[name]
  if flag.flag_type() == "bool":
    return f"--{name}"
  enum = getattr(flag.parser, "enum_values", None)
  if enum:
    return f"--{name}={enum[-1]}"
  if flag.flag_type() in ("int", "float"):
    return f"--{name}=1"
  return f"--{name}={flag.default or 'x'}"

rows = []
for mode in table.exclusive:
  offs = [a for m in table.additive for a in m.off]
  variants = [(None, list(mode.example) + offs)]
  for extra in table.additive:
    rest = [a for m in table.additive if m is not extra for a in m.off]
    variants.append((extra.name, list(mode.example) + rest +
                     list(extra.example)))
  for extra, args in variants:
    F.unparse_flags()
    F(["prog"] + args)
    base = [m.name for m in table.active(F)]
    base_refused = table.unread(F) is not None
    for name in sorted(defined):
      F.unparse_flags()
      F(["prog"] + args + [value(name)])
      active = table.active(F)
      read = modes.EVERYWHERE.union(*(m.reads for m in active))
      given = sorted(n for n in defined if F[n].present)
      rows.append(dict(mode=mode.name, extra=extra, base=base, flag=name,
                       base_refused=base_refused,
                       active=[m.name for m in active],
                       unread=sorted(set(given) - read),
                       found=table.unread(F)))
print(json.dumps(dict(
    defined=sorted(defined), rows=rows,
    reads={m.name: sorted(m.reads)
           for m in table.exclusive + table.additive})))
"""


def enumerate_command(name):
  done = subprocess.run([sys.executable, "-c", ENUMERATE, name], cwd=REPO,
                        capture_output=True, text=True, timeout=300,
                        check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_mode_and_flag(name):
  table = enumerate_command(name)
  defined = set(table["defined"])
  read_somewhere = set().union(*map(set, table["reads"].values()))
  # A mode names only flags the command has (no typo hides a flag) ...
  assert read_somewhere <= defined, read_somewhere - defined
  # ... and a flag no mode reads is one of the few the shared definitions
  # bring that the command refuses everywhere.
  nowhere = defined - read_somewhere - modes.EVERYWHERE
  assert nowhere <= {"hparams_set", "model", "activation_dtype"}, nowhere
  if nowhere:
    assert name == "t2t_attention", nowhere
  refused = 0
  for row in table["rows"]:
    # The example makes its mode the active one (and its additive mode on).
    assert row["base"][0] == row["mode"], row
    if row["extra"]:
      assert row["extra"] in row["base"], row
    if row["unread"]:
      flag, message = row["found"]
      assert flag in row["unread"], row
      assert f"--{flag}" in message and "\n" not in message, row
      refused += 1
    else:
      assert row["found"] is None, row
    if row["base_refused"]:   # an additive mode's flag this mode refuses
      continue
    if row["active"][0] == row["mode"] and row["flag"] not in set().union(
        *(table["reads"][m] for m in row["active"])) | modes.EVERYWHERE:
      assert row["found"][0] == row["flag"], row   # the flag added is named
  # Every command with more than one mode refuses something somewhere.
  if len(table["reads"]) > 1:
    assert refused, name


# The ignored-flag cases users met, as commands: (command, arguments, the
# flag the line must name).
CASES = [
    ("t2t_decoder", ["--saved_model_dir=/nowhere/1",
                     "--decode_hparams=beam_size=8"], "decode_hparams"),
    ("t2t_decoder", ["--saved_model_dir=/nowhere/1",
                     "--checkpoint_path=/nowhere/ckpt"], "checkpoint_path"),
    ("t2t_decoder", ["--saved_model_dir=/nowhere/1",
                     "--hparams_set=transformer_base"], "hparams_set"),
    ("t2t_decoder", ["--saved_model_dir=/nowhere/1", "--model=transformer"],
     "model"),
    ("t2t_decoder", ["--ct2_model_dir=/nowhere",
                     "--checkpoint_path=/nowhere/ckpt"], "checkpoint_path"),
    ("t2t_decoder", ["--ct2_model_dir=/nowhere",
                     "--hparams_set=transformer_base"], "hparams_set"),
    ("t2t_trainer", ["--problem=copy_sequence",
                     "--hparams_set=transformer_tiny", "--output_dir=/tmp/x",
                     "--noeval_bleu", "--eval_decode_hparams=beam_size=1"],
     "eval_decode_hparams"),
    ("t2t_trainer", ["--problem=copy_sequence",
                     "--hparams_set=transformer_tiny", "--output_dir=/tmp/x",
                     "--noeval_bleu", "--eval_bleu_lines=10"],
     "eval_bleu_lines"),
    ("t2t_trainer", ["--problem=copy_sequence",
                     "--hparams_set=transformer_tiny", "--output_dir=/tmp/x",
                     "--warm_start_optimizer"], "warm_start_optimizer"),
    ("t2t_decoder", ["--problem=copy_sequence", "--output_dir=/tmp/x",
                     "--data_dir=/tmp/x", "--decode_prefix_partial"],
     "decode_prefix_partial"),
    ("t2t_exporter", ["--problem=copy_sequence", "--output_dir=/tmp/x",
                      "--data_dir=/tmp/x", "--format=ctranslate2",
                      "--export_version=3"], "export_version"),
]


@pytest.mark.parametrize("name,args,flag", CASES)
def test_ignored_flag_is_refused(name, args, flag):
  done = command(name, *args)
  assert done.returncode == 2, done.stderr[-2000:]
  lines = done.stderr.strip().splitlines()
  assert len(lines) == 1 and f"--{flag}" in lines[0], done.stderr
  assert "Traceback" not in done.stderr


def test_an_empty_value_is_not_a_flag_given():
  """``--saved_model_dir=`` (a script's empty variable) neither picks the
  SavedModel mode nor is refused as a flag the checkpoint mode ignores;
  ``--saved_model_dir=X`` with a checkpoint-only flag is refused."""
  from absl import flags
  from t2t_keras.bin import modes
  values = flags.FlagValues()
  flags.DEFINE_string("saved_model_dir", "", "", flag_values=values)
  flags.DEFINE_string("checkpoint_path", "", "", flag_values=values)
  table = modes.Modes("t2t-x", exclusive=(
      modes.Mode("through --saved_model_dir", frozenset({"saved_model_dir"}),
                 when=lambda f: bool(f.saved_model_dir)),
      modes.Mode("from a checkpoint", frozenset({"checkpoint_path"}))))
  values(["prog", "--saved_model_dir=", "--checkpoint_path=/c"])
  assert table.unread(values) is None
  values.unparse_flags()
  values(["prog", "--saved_model_dir=/s", "--checkpoint_path=/c"])
  name, message = table.unread(values)
  assert name == "checkpoint_path" and "through --saved_model_dir" in message
