"""Typed hyperparameters with tensor2tensor's override syntax and JSON I/O.

An ``HParams`` holds named values whose types are fixed when they are added
(``int``, ``float``, ``bool`` or ``str``). Overrides use tensor2tensor's
syntax, ``"hidden_size=256,layer_prepostprocess_dropout=0.2,pos=emb"``; every
error names the offending key or fragment and says what is valid.
"""

import difflib
import json

from t2t_keras.errors import UserError
from t2t_keras.io.outputs import output_file
from t2t_keras.io import json_files
from t2t_keras import hparam_ranges

_TYPES = (bool, int, float, str)
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


class HParamsError(UserError):
  """Raised for unknown names, wrong types and malformed override strings."""


def _close(name, candidates):
  return difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)


def _coerce(name, value, expected):
  """Converts ``value`` (a string from the command line, or a Python value)
  to ``expected``, or raises HParamsError naming ``name``."""
  if isinstance(value, str) and expected is not str:
    text = value.strip()
    if expected is bool:
      if text.lower() in _TRUE:
        return True
      if text.lower() in _FALSE:
        return False
    else:
      try:
        return expected(text) if expected is float else int(text, 10)
      except ValueError:
        pass
    raise HParamsError(
        f"hparam '{name}' expects {expected.__name__}, got {value!r}")
  if expected is float and isinstance(value, int) and not isinstance(
      value, bool):
    return float(value)
  if expected is int and isinstance(value, float) and value.is_integer():
    return int(value)
  if type(value) is not expected:
    raise HParamsError(f"hparam '{name}' expects {expected.__name__}, got "
                       f"{type(value).__name__} {value!r}")
  return value


class HParams:
  """A set of named, typed hyperparameters.

  Example:
    >>> hp = HParams(hidden_size=512, pos="timing")
    >>> hp.parse("hidden_size=256,pos=emb").hidden_size
    256
  """

  def __init__(self, **values):
    object.__setattr__(self, "_values", {})
    object.__setattr__(self, "_types", {})
    for name, value in values.items():
      self.add_hparam(name, value)

  # -- definition -----------------------------------------------------------
  def add_hparam(self, name, value):
    """Adds a new hparam; its type is the type of ``value``."""
    if name in self._values:
      raise HParamsError(f"hparam '{name}' already exists")
    if not name.isidentifier():
      raise HParamsError(f"hparam name {name!r} is not a valid identifier")
    if type(value) not in _TYPES:
      raise HParamsError(f"hparam '{name}' has unsupported type "
                         f"{type(value).__name__}; use bool, int, float or str")
    self._values[name] = value
    self._types[name] = type(value)
    return self

  def set_hparam(self, name, value):
    """Sets an existing hparam, converting ``value`` to its type."""
    self._check_known(name)
    self._values[name] = _coerce(name, value, self._types[name])
    return self

  def _check_known(self, name):
    if name not in self._values:
      close = _close(name, list(self._values))
      hint = f" Did you mean: {', '.join(close)}?" if close else ""
      raise HParamsError(
          f"unknown hparam '{name}'.{hint} Valid names: "
          f"{', '.join(sorted(self._values))}")

  # -- access ---------------------------------------------------------------
  def __getattr__(self, name):
    try:
      return self._values[name]
    except KeyError:
      raise AttributeError(name) from None

  def __setattr__(self, name, value):
    self.set_hparam(name, value)

  def __contains__(self, name):
    return name in self._values

  def __eq__(self, other):
    return isinstance(other, HParams) and self.values() == other.values()

  def __repr__(self):
    body = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
    return f"HParams({body})"

  def get(self, name, default=None):
    return self._values.get(name, default)

  def values(self):
    """A dict copy of all values."""
    return dict(self._values)

  def copy(self):
    return HParams(**self._values)

  # -- overrides ------------------------------------------------------------
  def override_from_dict(self, values):
    for name, value in values.items():
      self.set_hparam(name, value)
    return self

  def parse(self, overrides):
    """Applies ``"a=1,b=0.2,c=text"`` overrides; returns self.

    Raises HParamsError naming the malformed part, an unknown key (with close
    matches) or a value of the wrong type.
    """
    if not overrides or not overrides.strip():
      return self
    parsed = {}
    for part in overrides.split(","):
      if not part.strip():
        raise HParamsError(f"empty part in hparams string {overrides!r} "
                           "(a stray comma?); expected 'name=value,...'")
      if "=" not in part:
        raise HParamsError(f"malformed part {part.strip()!r} in hparams string "
                           f"{overrides!r}: expected 'name=value'")
      name, value = part.split("=", 1)
      name = name.strip()
      if not name:
        raise HParamsError(f"malformed part {part.strip()!r} in hparams string "
                           f"{overrides!r}: missing name before '='")
      if name in parsed:
        raise HParamsError(f"hparam '{name}' is set twice in {overrides!r}")
      self._check_known(name)
      parsed[name] = _coerce(name, value, self._types[name])
    self._values.update(parsed)
    return self

  # -- JSON -----------------------------------------------------------------
  def to_json(self, indent=2):
    return json.dumps(self._values, indent=indent, sort_keys=True)

  @classmethod
  def from_json(cls, text):
    values = json.loads(text)
    if not isinstance(values, dict):
      raise HParamsError("hparams JSON must be an object of name: value")
    return cls(**values)

  def save(self, path):
    """Writes the hparams to ``path`` whole or not at all
    (``outputs.output_file``), so a reader (another worker) never sees
    half."""
    with output_file(path, "w", encoding="utf-8") as f:
      f.write(self.to_json() + "\n")

  @classmethod
  def load(cls, path, like=None):
    """The hparams saved in ``path``; a damaged file is a one-line
    ``UserError`` naming it. With ``like`` (an HParams), a value whose type
    is not that of ``like``'s value of the same name (a string where a
    size is due) is one too."""
    remedy = ("t2t-trainer writes it beside the run's checkpoints: restore "
              "it from a copy, or rewrite it with the run's --hparams_set "
              "and --hparams")
    values = json_files.load(path, remedy=remedy)
    for name, value in (like.values().items() if like else ()):
      if name in values and value is not None:
        # A number where a number is due: an integer default may take a
        # fraction (ema_decay=0 is off, 0.999 on).
        kind = float if type(value) in (int, float) else type(value)
        json_files.check(path, name, values[name], kind, remedy)
        _check_size(path, name, values[name], value, remedy)
    try:
      hparam_ranges.check(values, hparam_ranges.MODEL, path)
    except UserError as e:
      raise UserError(f"{path} is damaged: {str(e).split(': ', 1)[1]}; "
                      f"{remedy}") from None
    return cls(**values)


# Sizes and counts are int32 in the graph.
_LARGEST_COUNT = 2**31 - 1


def _check_size(path, name, value, default, remedy):
  """A ``UserError`` naming ``path`` when ``value`` stands where the
  integer ``default`` does and is a fraction, or larger than a tensor's
  int32 sizes hold (``"max_length": 1e308``, ``"filter_size": 1e20``)."""
  if type(default) is not int or isinstance(value, bool):
    return
  if isinstance(value, float) and default != 0 and not value.is_integer():
    problem = "a fraction"
  elif abs(value) > _LARGEST_COUNT:
    problem = f"larger than {_LARGEST_COUNT:,}"
  else:
    return
  raise UserError(f"{path} is damaged: {name} is {value!r}, {problem} "
                  f"where a whole number is due; {remedy}")
