"""The registry of models, hparams sets, problems, searches, learning-rate
schedule factors, optimizers and training hooks, by snake_case name.

Definitions register themselves with decorators::

    @registry.register_hparams
    def transformer_base():
      return HParams(...)

The built-in registrations (``t2t_keras.models``, the repository's
``hparams/`` and ``problems/``, installed as ``t2t_keras.hparams_sets`` and
``t2t_keras.problems``, and the modules of ``_BUILTIN_MODULES`` for the other
kinds) are imported on the first lookup of their kind
(``load_builtin``); a user's own registrations come from a directory with
``import_usr_dir`` (tensor2tensor's ``--t2t_usr_dir``).
"""

import ast
import difflib
import glob
import importlib
import importlib.util
import os
import re
import sys
import traceback

from t2t_keras.errors import UserError

# Where each kind's built-in registrations live, imported on first lookup.
_BUILTIN_MODULES = {"model": "t2t_keras.models",
                    "hparams": "t2t_keras.hparams_sets",
                    "problem": "t2t_keras.problems",
                    "search": "t2t_keras.decoding.searches",
                    "schedule": "t2t_keras.training.schedule",
                    "optimizer": "t2t_keras.training.optimizer",
                    "hook": ("t2t_keras.training.hooks",
                             "t2t_keras.training.ema",
                             "t2t_keras.training.finetune")}
_KINDS = tuple(_BUILTIN_MODULES)
# Names once registered and what a user asks for instead: looking one up
# is a one-line error that names the successor.
RETIRED = {
    "hparams": {
        "transformer_multi30k_v4": "transformer_multi30k (the same values)",
        "transformer_multi30k_v3":
            "transformer_multi30k (it had --hparams=label_smoothing=0.1)",
        "transformer_multi30k_v2": "transformer_multi30k",
        "transformer_multi30k_ema": "transformer_multi30k",
        "transformer_pointer_tiny": "transformer_tiny",
    },
    "model": {
        "transformer_pointer": "transformer (the copy pointer parsed worse: "
                               "docs/experiments.md)",
    },
    "problem": {
        "parsing_wsj_inorder":
            "parsing_wsj (the brackets in order are its default)",
        "parsing_wsj_first": "parsing_wsj with t2t-datagen "
                             "--tree_order=top-down --tree_leaves=first",
        "parsing_wsj_xx": "parsing_wsj with t2t-datagen "
                          "--tree_order=top-down --tree_leaves=xx",
        "parsing_wsj_tags": "parsing_wsj with t2t-datagen "
                            "--tree_order=top-down --tree_leaves=tags",
        "parsing_wsj_bare_close": "parsing_wsj with t2t-datagen "
                                  "--tree_order=top-down "
                                  "--notree_close_labels",
    },
}
_REGISTRIES = {kind: {} for kind in _KINDS}
_loaded = set()


class RegistryError(UserError, KeyError):
  """Unknown or duplicate registry names. The message lists known names."""

  def __str__(self):
    return self.args[0]


def snake_case(name):
  """``TranslateEnde`` -> ``translate_ende``; snake_case names pass through."""
  name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
  name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
  return name.lower()


def _register(kind, obj_or_name):
  def decorator(obj, name=None):
    key = name or snake_case(obj.__name__)
    table = _REGISTRIES[kind]
    if key in table and table[key] is not obj:
      existing = table[key]
      same_source = (getattr(existing, "__module__", None) == obj.__module__
                     and existing.__qualname__ == obj.__qualname__)
      if not same_source:
        raise RegistryError(f"{kind} '{key}' is already registered by "
                            f"{existing.__module__}.{existing.__qualname__}")
    table[key] = obj
    obj.registered_name = key
    return obj

  if isinstance(obj_or_name, str):
    return lambda obj: decorator(obj, obj_or_name)
  return decorator(obj_or_name)


def register_model(obj_or_name):
  """Registers a model class (decorator; optionally ``@register_model("x")``)."""
  return _register("model", obj_or_name)


def register_hparams(obj_or_name):
  """Registers a function returning an HParams (decorator)."""
  return _register("hparams", obj_or_name)


def register_problem(obj_or_name):
  """Registers a Problem class (decorator)."""
  return _register("problem", obj_or_name)


def register_search(name):
  """Registers a ``decoding.searches.Search`` subclass (decorator)."""
  return _register("search", name)


def register_schedule(name):
  """Registers a learning-rate factor ``(step, hparams) -> float32``
  (decorator; ``training.schedule``)."""
  return _register("schedule", name)


def register_optimizer(name):
  """Registers ``(hparams, learning_rate) -> keras optimizer`` (decorator)."""
  return _register("optimizer", name)


def register_hook(name):
  """Registers a ``training.hooks.TrainingHook`` subclass (decorator)."""
  return _register("hook", name)


def load_builtin(kinds=_KINDS):
  """Imports the built-in registrations of ``kinds`` once each.

  Each kind is loaded only when asked for, so that looking up an hparams
  set needs neither TensorFlow nor the problems' data code.
  """
  for kind in kinds:
    if kind in _loaded:
      continue
    _loaded.add(kind)
    modules = _BUILTIN_MODULES[kind]
    for module in (modules,) if isinstance(modules, str) else modules:
      importlib.import_module(module)


def lookup(kind, name):
  """What is registered as ``name`` of ``kind``; an unknown name is a
  ``RegistryError`` listing the close ones."""
  return _lookup(kind, name)


def names(kind):
  """The registered names of ``kind``, sorted."""
  load_builtin([kind])
  return sorted(_REGISTRIES[kind])


def _retired(kind, name):
  """A ``RegistryError`` naming the successor of a retired ``name``."""
  successor = RETIRED.get(kind, {}).get(name)
  if successor is None:
    return None
  return RegistryError(f"{kind} name '{name}' is retired: use {successor}")


def _lookup(kind, name):
  if _retired(kind, name):
    raise _retired(kind, name)
  load_builtin([kind])
  table = _REGISTRIES[kind]
  if name in table:
    return table[name]
  raise _unknown(kind, name, table)


def _unknown(kind, name, known):
  known = sorted(known)
  close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
  hint = f" Did you mean: {', '.join(close)}?" if close else ""
  return RegistryError(f"unknown {kind} name '{name}'.{hint} Known {kind} "
                       f"names: {', '.join(known)}")


def check_name(kind, name):
  """Raises ``lookup``'s ``RegistryError`` for an unknown ``name`` without
  importing the built-in registrations where their source says every name
  (``declared_names``): a command-line typo is answered before TensorFlow
  is imported. Anything else is looked up as ``lookup`` does."""
  if _retired(kind, name):
    raise _retired(kind, name)
  if name in _REGISTRIES[kind] or kind in _loaded:
    _lookup(kind, name)
    return
  declared = declared_names(kind)
  if declared is None:
    _lookup(kind, name)
  elif name not in declared:
    raise _unknown(kind, name, declared | set(_REGISTRIES[kind]))


def _source_files(module):
  spec = importlib.util.find_spec(module)
  if spec is None or spec.origin is None:
    return None
  if spec.submodule_search_locations:
    return sorted(path for folder in spec.submodule_search_locations
                  for path in glob.glob(os.path.join(folder, "*.py")))
  return [spec.origin]


def declared_names(kind):
  """The names ``kind``'s built-in modules register, read from their
  source (decorators ``@register_<kind>`` and ``@register_<kind>("name")``)
  without importing them; None where the source registers some other way
  (a call this reading cannot follow), so only an import tells."""
  decorator = f"register_{kind}"
  modules = _BUILTIN_MODULES[kind]
  names = set()
  for module in (modules,) if isinstance(modules, str) else modules:
    files = _source_files(module)
    if files is None:
      return None
    for path in files:
      with open(path, encoding="utf-8") as f:
        text = f.read()
      found = _decorated_names(ast.parse(text, path), decorator)
      # Every mention of the decorator must be one that was read.
      if len(found) != len(re.findall(rf"\b{decorator}\b", text)):
        return None
      names.update(found)
  return names


def _decorated_names(tree, decorator):
  found = []
  for node in ast.walk(tree):
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef)):
      continue
    for deco in node.decorator_list:
      call = deco if isinstance(deco, ast.Call) else None
      target = call.func if call else deco
      if getattr(target, "attr", getattr(target, "id", None)) != decorator:
        continue
      if call is None:
        found.append(snake_case(node.name))
      elif (len(call.args) == 1 and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)):
        found.append(call.args[0].value)
  return found


def model(name):
  """The model class registered as ``name``."""
  return _lookup("model", name)


def hparams(name):
  """A fresh HParams from the set registered as ``name``."""
  return _lookup("hparams", name)()


def problem(name):
  """A new instance of the Problem registered as ``name``."""
  return _lookup("problem", name)()


def list_models():
  return names("model")


def list_hparams():
  return names("hparams")


def list_problems():
  return names("problem")


_TITLES = {"model": "Models", "hparams": "HParams sets",
           "problem": "Problems", "search": "Searches (decode_hparams search=)",
           "schedule": "Learning-rate factors (hparams learning_rate_schedule=)",
           "optimizer": "Optimizers (hparams optimizer=)",
           "hook": "Training hooks (hparams training_hooks=)"}


def help_string():
  """Everything registered, as printed by ``--registry_help``."""
  lines = []
  for kind in _KINDS:
    lines.append(f"{_TITLES[kind]}:")
    lines.extend(f"  {n}" for n in names(kind))
  return "\n".join(lines)


def import_usr_dir(usr_dir):
  """Imports a user's directory of registrations as a package.

  The directory must hold an ``__init__.py`` that imports (or defines) the
  user's registered models, hparams sets and problems. It is imported from
  its path, under its own name unless a module of that name is already
  loaded (a folder called ``code`` is not the standard ``code`` module),
  and an error it raises is one line naming the file and line.
  """
  if not usr_dir:
    return None
  path = os.path.abspath(os.path.expanduser(usr_dir)).rstrip(os.sep)
  init = os.path.join(path, "__init__.py")
  if not os.path.isfile(init):
    raise UserError(f"t2t_usr_dir {usr_dir!r} must be a directory with an "
                      "__init__.py that imports your registrations")
  parent, name = os.path.split(path)
  if parent not in sys.path:
    sys.path.insert(0, parent)
  load_builtin()
  loaded = sys.modules.get(name)
  if loaded is not None and os.path.dirname(
      os.path.abspath(getattr(loaded, "__file__", "") or "")) == path:
    return loaded
  module_name = name if loaded is None else f"t2t_usr_dir_{name}"
  spec = importlib.util.spec_from_file_location(
      module_name, init, submodule_search_locations=[path])
  module = importlib.util.module_from_spec(spec)
  sys.modules[module_name] = module
  try:
    spec.loader.exec_module(module)
  except Exception as e:
    del sys.modules[module_name]
    where = next((f"{frame.filename}:{frame.lineno}" for frame in
                  reversed(traceback.extract_tb(e.__traceback__))
                  if frame.filename.startswith(path + os.sep)), init)
    raise UserError(f"--t2t_usr_dir={usr_dir} does not import: "
                    f"{type(e).__name__}: {e} ({where})") from None
  return module
