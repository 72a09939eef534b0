"""Private API (Keras's, TensorFlow's, another module's) is read in
``t2t_keras/kernels/`` only: a module elsewhere that reaches an object's
``_name`` (other than its own ``self``/``cls``), or passes such a name to
``getattr``/``setattr``/``hasattr``, fails here. Reading the library's
source, as test_floors.py does; ruff's SLF001 says the same in
pyproject.toml."""

import ast
import textwrap

from test_floors import sources

OWN = {"self", "cls"}
BY_NAME = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name):
  return name.startswith("_") and not (name.startswith("__") and
                                       name.endswith("__"))


def private_uses(source):
  """[(line, what)] of private attributes ``source`` reaches on objects
  other than its own."""
  found = []
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Attribute) and _private(node.attr):
      owner = node.value
      if isinstance(owner, ast.Name) and owner.id in OWN:
        continue
      if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) \
          and owner.func.id == "super":
        continue
      found.append((node.lineno, "." + node.attr))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id in BY_NAME and len(node.args) > 1:
      owner, name = node.args[0], node.args[1]
      if isinstance(name, ast.Constant) and isinstance(name.value, str) and \
          _private(name.value) and not (isinstance(owner, ast.Name) and
                                        owner.id in OWN):
        found.append((node.lineno, f"{node.func.id}(..., {name.value!r})"))
  return found


def test_private_api_only_in_kernels():
  found = []
  for _, path, text in sources("t2t_keras.kernels"):
    found += [f"{path}:{line}: {what}" for line, what in private_uses(text)]
  assert not found, "private API outside kernels/:\n" + "\n".join(found)


def test_the_check_sees_each_kind():
  source = textwrap.dedent("""
      def f(optimizer, model, self):
        self._mine = 1
        super()._also_mine()
        optimizer._momentums[0].assign(0)
        getattr(model, "_query_dense")
        model.__class__
  """)
  assert sorted(what for _, what in private_uses(source)) == [
      "._momentums", "getattr(..., '_query_dense')"]
