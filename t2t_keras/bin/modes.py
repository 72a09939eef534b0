"""What each t2t-* command reads in each of its modes, so that a flag the
chosen mode would ignore is refused in one line instead of being dropped
without a word (a SavedModel decodes with the beam it was exported with, so
``--decode_hparams=beam_size=8`` there is refused, not ignored).

A command declares its modes in order: ``exclusive`` ones, of which the
first whose ``when`` holds is the command's mode, and ``additive`` ones,
each adding its flags while its ``when`` holds (t2t-trainer's
``--generate_data``). A flag the command defines and the user gave is read
when one of the active modes lists it (or it is one of ``EVERYWHERE``);
otherwise ``check`` refuses it. A new mode lists what it reads, or its
flags are refused: ``tests/test_modes.py`` runs every command x mode x flag.
"""

import dataclasses
from typing import Callable, Mapping, Tuple

from absl import flags

# Flags every command reads, whatever its mode.
EVERYWHERE = frozenset({"t2t_usr_dir", "registry_help", "tf_logs",
                        "gpu_memory_growth"})


def always(flag_values):
  del flag_values
  return True


def because(reason, *names):
  """A ``Mode.why``: ``reason`` for each of the flags ``names``."""
  return dict.fromkeys(names, reason)


def _given(flag):
  """Whether the user gave ``flag`` a value: ``--name=`` with nothing after
  it (a script's empty variable) is not one."""
  return bool(flag.present) and flag.value not in ("", None, [])


@dataclasses.dataclass(frozen=True)
class Mode:
  """One way a command runs.

  name: how messages name it, e.g. "decoding through --saved_model_dir".
  reads: the flags it reads.
  when: flag values -> whether it is the (or an) active mode.
  why: flag -> why this mode does not read it, e.g. "a SavedModel decodes
    with the settings it was exported with" (``because`` builds it).
  example: command-line arguments that make it active (for the tests).
  off: arguments that make an additive mode inactive (for the tests).
  """
  name: str
  reads: frozenset
  when: Callable = always
  why: Mapping = dataclasses.field(default_factory=dict)
  example: Tuple[str, ...] = ()
  off: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Modes:
  command: str
  exclusive: Tuple[Mode, ...]
  additive: Tuple[Mode, ...] = ()

  def active(self, flag_values):
    """The exclusive mode that applies, then the additive ones that do."""
    first = next(m for m in self.exclusive if m.when(flag_values))
    return [first] + [m for m in self.additive if m.when(flag_values)]

  def defined(self, flag_values):
    """The flags the command defines (absl's own left out)."""
    from t2t_keras.bin import common
    return set(common.flag_values(flag_values))

  def unread(self, flag_values):
    """(flag, message) for the first flag given that no active mode reads,
    or None."""
    active = self.active(flag_values)
    read = EVERYWHERE.union(*(m.reads for m in active))
    for name in sorted(self.defined(flag_values)):
      if name in read or not _given(flag_values[name]):
        continue
      readers = [m for m in self.exclusive + self.additive
                 if name in m.reads]
      why = next((m.why[name] for m in active if name in m.why), "")
      why = f" ({why})" if why else ""
      if not readers:
        return name, f"{self.command} does not read --{name}{why}"
      where = " or ".join(m.name for m in readers)
      if all(m in self.additive for m in readers):
        return name, f"{self.command}: --{name} is read only {where}"
      return name, (f"{self.command}: --{name} is not read {active[0].name}"
                    f"{why}; it is read {where}")
    return None

  def check(self, flag_values=None):
    """Raises UsageError naming the first given flag the mode would
    ignore."""
    from absl import app
    found = self.unread(flag_values or flags.FLAGS)
    if found:
      raise app.UsageError(found[1])
