"""JSON files a run writes (hparams.json, model.json, best/best.json, the
datagen mixture record, an export's settings), read with one line naming
the file when one is damaged: cut short, edited by hand, or missing a field,
instead of a JSONDecodeError or KeyError traceback."""

import json

from t2t_keras.errors import UserError


def load(path, keys=(), remedy=""):
  """The JSON object in ``path``, which must hold ``keys``.

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
  return value
