"""The house reads bottom-up: each module imports only from its own floor
and the floors below it (CONTRIBUTING.md's table). Every import counts,
those inside functions too; the package's ``__init__`` (its public names)
is the one exception."""

import ast
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Lowest first: (floor, the t2t_keras modules and packages on it).
FLOORS = [
    ("names", {"errors", "ids"}),
    ("io", {"io"}),
    ("configuration", {"registry", "hparams", "hparam_ranges",
                       "decode_defaults", "buckets"}),
    ("kernels", {"kernels"}),
    ("layers", {"layers"}),
    ("models", {"models"}),
    ("metrics", {"metrics"}),
    ("data", {"data"}),
    ("decoding", {"decoding"}),
    ("parsing", {"parsing"}),
    ("training", {"training"}),
    ("registrations", {"problems", "hparams_sets"}),
    ("export, analysis, t2t_import", {"export", "analysis", "t2t_import"}),
    ("bin", {"bin"}),
]
LEVEL = {name: level for level, (_, names) in enumerate(FLOORS)
         for name in names}
# Where each installed package's files are (setup.py's package_dir).
SOURCES = {"t2t_keras": "t2t_keras", "t2t_keras.problems": "problems",
           "t2t_keras.hparams_sets": "hparams"}


def modules():
  """(dotted name, file) of every module of the package."""
  for package, folder in SOURCES.items():
    for root, _, files in os.walk(os.path.join(REPO, folder)):
      for f in files:
        if f.endswith(".py"):
          path = os.path.join(root, f)
          relative = os.path.relpath(path, os.path.join(REPO, folder))
          name = package + "." + relative[:-3].replace(os.sep, ".")
          yield name.removesuffix(".__init__"), path


def sources(outside):
  """(dotted name, file, source text) of every module not under the
  package ``outside`` (a dotted prefix): what the house-rule tests read."""
  for name, path in modules():
    if not name.startswith(outside):
      with open(path, encoding="utf-8") as f:
        yield name, path, f.read()


def floor_of(module):
  """The floor of a dotted t2t_keras module name, or None (the package
  itself)."""
  parts = module.split(".")
  return LEVEL[parts[1]] if len(parts) > 1 else None


def imported(path):
  """The t2t_keras modules ``path`` imports (``from X import y`` counts y
  when X.y is a module of the package)."""
  known = dict(modules.cache)
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
               else node.module for a in node.names]
    else:
      continue
    yield from (n for n in names if n.startswith("t2t_keras."))


def test_every_module_is_on_a_floor():
  names = {name.split(".")[1] for name, _ in modules.cache if "." in name}
  assert names <= set(LEVEL), sorted(names - set(LEVEL))


def test_no_module_imports_from_a_floor_above_its_own():
  wrong = []
  for name, path in modules.cache:
    mine = floor_of(name)
    if mine is None:
      continue
    for other in imported(path):
      theirs = floor_of(other)
      if theirs is not None and theirs > mine:
        wrong.append(f"{name} ({FLOORS[mine][0]}) imports {other} "
                     f"({FLOORS[theirs][0]})")
  assert not wrong, "\n".join(sorted(set(wrong)))


modules.cache = list(modules())
