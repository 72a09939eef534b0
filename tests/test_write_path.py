"""Files change one way: through ``t2t_keras/io/`` (whole or not at all,
never over a special file, swapped in by staging). A module outside
``io/`` that opens a file for writing, renames or removes one fails here,
unless the allow-list below names it and says why. The test reads the
library's source, as ``test_floors.py`` does."""

import ast
import textwrap

from test_floors import modules

# (module, call) -> why it may write outside io/.
ALLOWED = {
    ("t2t_keras.kernels.rows_product", "os.replace"):
        "the kernel library's compiled-code cache, built under a temporary "
        "name and renamed; kernels sit below io/'s floor",
    ("t2t_keras.kernels.rows_product", "os.remove"):
        "the same cache file's temporary name, after a failed build",
    ("t2t_keras.bin.common", "os.open"):
        "opens /dev/null to stand in for a standard output whose reader "
        "went away (dup2); no file is written",
}

# Calls that change files: name -> the modes of ``open`` that write.
CHANGING = {"os.replace", "os.rename", "os.remove", "os.unlink", "os.rmdir",
            "os.removedirs", "shutil.rmtree", "shutil.move",
            "shutil.copy", "shutil.copyfile", "shutil.copytree",
            "tf.io.gfile.remove", "tf.io.gfile.rename", "tf.io.gfile.rmtree",
            "Path.unlink", "Path.write_text", "Path.write_bytes"}
WRITING_MODES = set("wax+")


def _name(node):
  """The dotted name a call is made through (``os.replace``), or ''."""
  parts = []
  while isinstance(node, ast.Attribute):
    parts.append(node.attr)
    node = node.value
  if isinstance(node, ast.Name):
    parts.append(node.id)
  return ".".join(reversed(parts))


def _mode(call):
  """The mode of an ``open`` call ("r" when none is given; None when it is
  not a constant)."""
  given = call.args[1] if len(call.args) > 1 else next(
      (k.value for k in call.keywords if k.arg == "mode"), None)
  if given is None:
    return "r"
  return given.value if isinstance(given, ast.Constant) else None


def changes(source):
  """[(line, call)] of the calls in ``source`` that change files."""
  found = []
  for node in ast.walk(ast.parse(source)):
    if not isinstance(node, ast.Call):
      continue
    name = _name(node.func)
    if name in ("open", "io.open", "os.fdopen", "os.open"):
      mode = _mode(node) if name != "os.open" else None
      if name == "os.open" or mode is None or WRITING_MODES & set(mode):
        found.append((node.lineno, name))
    elif name in CHANGING or (name.endswith((".write_text", ".write_bytes"))
                              and not name.startswith("files.")):
      found.append((node.lineno, name))
  return sorted(found)


def outside_io():
  """[(module, line, call)] of every file change outside io/ that the
  allow-list does not name."""
  wrong = []
  for module, path in modules.cache:
    if module.startswith("t2t_keras.io.") or module == "t2t_keras.io":
      continue
    with open(path, encoding="utf-8") as f:
      for line, call in changes(f.read()):
        if (module, call) not in ALLOWED:
          wrong.append((module, line, call))
  return wrong


def test_no_module_outside_io_changes_files_itself():
  wrong = outside_io()
  assert not wrong, "\n".join(
      f"{m}:{l}: {c} (write through t2t_keras.io, or add it to ALLOWED "
      "with why)" for m, l, c in wrong)


def test_every_allowed_entry_is_still_needed():
  used = set()
  for module, path in modules.cache:
    with open(path, encoding="utf-8") as f:
      used |= {(module, call) for _, call in changes(f.read())}
  assert set(ALLOWED) <= used, sorted(set(ALLOWED) - used)


def test_an_injected_write_is_found():
  injected = textwrap.dedent("""
      import os, shutil
      def save(path, text):
        with open(path, "w") as f:
          f.write(text)
      def drop(path):
        os.remove(path)
        shutil.rmtree(path)
      def read(path):
        return open(path).read(), open(path, "rb").read()
      """)
  assert [c for _, c in changes(injected)] == ["open", "os.remove",
                                               "shutil.rmtree"]
