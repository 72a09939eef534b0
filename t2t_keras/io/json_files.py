"""JSON files a run writes (hparams.json, model.json, best/best.json, the
datagen mixture record, an export's settings), read with one line naming
the file when one is damaged: cut short, edited by hand, or missing a field,
instead of a JSONDecodeError or KeyError traceback."""

import json

from t2t_keras.errors import UserError


def load(path, keys=(), remedy=""):
  """The JSON object in ``path``, which must hold ``keys``: names, or a
  dict of name -> the type its value must have (``int``, ``float``, which
  an integer is too, ``str``, ``bool``, ``list``, ``dict``, or a tuple of
  them; ``type(None)`` allows null).

  Raises ``UserError`` naming the file, what is wrong with it and
  ``remedy`` (what to do, e.g. "restore it from a copy")."""
  tail = f"; {remedy}" if remedy else ""
  try:
    with open(path, encoding="utf-8") as f:
      value = json.load(f)
  except json.JSONDecodeError as e:
    raise UserError(f"{path} is damaged: not JSON ({e.msg} at line "
                    f"{e.lineno}, column {e.colno}){tail}") from None
  except UnicodeDecodeError as e:
    raise UserError(f"{path} is damaged: not UTF-8 text (byte "
                    f"{e.start}){tail}") from None
  if not isinstance(value, dict):
    raise UserError(f"{path} is damaged: expected a JSON object, found "
                    f"{type(value).__name__}{tail}")
  missing = [k for k in keys if k not in value]
  if missing:
    raise UserError(f"{path} is damaged: no {', '.join(map(repr, missing))}"
                    f"{tail}")
  if isinstance(keys, dict):
    for key, kind in keys.items():
      check(path, repr(key), value[key], kind, remedy)
  return value


def _is(value, kind):
  if isinstance(kind, tuple):
    return any(_is(value, k) for k in kind)
  if isinstance(value, bool) and kind is not bool:
    return False   # JSON's true is not a number
  return isinstance(value, (int, float) if kind is float else kind)


def _named(kind):
  if isinstance(kind, tuple):
    return " or ".join(_named(k) for k in kind)
  return {int: "an integer", float: "a number", str: "a string",
          bool: "true or false", list: "a list", dict: "an object",
          type(None): "null"}.get(kind, kind.__name__)


def check(path, name, value, kind, remedy=""):
  """A ``UserError`` naming ``path`` when ``value`` (its field ``name``)
  is not of ``kind`` (as ``load``'s keys)."""
  if not _is(value, kind):
    shown = json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise UserError(f"{path} is damaged: {name} is {shown}, expected "
                    f"{_named(kind)}" + (f"; {remedy}" if remedy else ""))
