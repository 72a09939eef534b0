"""Imports sit at the top of the library's modules. Inside a function
only: the heavy or optional packages of ``HEAVY`` (imported where they are
used, so that ``import t2t_keras`` and a command's flag check stay light,
and a missing optional package fails only the feature that needs it), and
the few own modules ``LATE`` names with why. The commands (``bin/``) parse
their flags before TensorFlow loads and import the library late. Reads the
source, as test_floors.py does."""

import ast
import textwrap

from test_floors import sources

HEAVY = {"tensorflow", "keras", "jax", "jaxlib", "tensorflow_text",
         "tensorflow_serving", "tensorflow_datasets", "sentencepiece",
         "sacremoses", "ctranslate2", "matplotlib"}
# (module, imported) -> why it is imported inside a function.
LATE = {
    ("t2t_keras", "t2t_keras.models.builder.build_model"):
        "build_model, the package's one public function, loads the models "
        "(and TensorFlow) when called, so `import t2t_keras` stays light",
    ("t2t_keras.data.t2t_subword",
     "t2t_keras.data.t2t_subword_graph.SubwordGraph"):
        "the graph tokenizer imports this module (a cycle) and TensorFlow",
    ("t2t_keras.decoding.run", "t2t_keras.decoding.backends.jax_decoder"):
        "the JAX backend, loaded only under KERAS_BACKEND=jax",
    ("t2t_keras.models.builder", "t2t_keras.io.checkpoint_io"):
        "reads checkpoints through TensorFlow; the JAX backend builds models "
        "without importing it (tests/jax_search_check.py)",
    ("t2t_keras.models.builder", "t2t_keras.io.checkpoint_paths"):
        "the same",
    ("t2t_keras.training.loss", "t2t_keras.kernels.loss"):
        "TensorFlow's loss kernel; the loss itself trains on JAX too "
        "(benchmarks/train_speed_jax.py checks it imports no TensorFlow)",
}


def late_imports(source):
  """[(line, imported module)] of the imports inside functions."""
  found = []
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      for inner in ast.walk(node):
        if isinstance(inner, ast.Import):
          found += [(inner.lineno, a.name) for a in inner.names]
        elif isinstance(inner, ast.ImportFrom) and inner.level == 0:
          found += [(inner.lineno, f"{inner.module}.{a.name}")
                    for a in inner.names]
  return sorted(set(found))


def test_imports_at_the_top():
  found = []
  for name, path, text in sources("t2t_keras.bin"):
    for line, imported in late_imports(text):
      if imported.split(".")[0] in HEAVY or (name, imported) in LATE:
        continue
      found.append(f"{path}:{line}: {imported}")
  assert not found, ("imports inside functions (move them to the top, or "
                     "name the package in HEAVY):\n" + "\n".join(found))


def test_the_check_sees_a_late_import():
  source = textwrap.dedent("""
      import os
      def f():
        import json
        import tensorflow as tf
        from t2t_keras.io import files
  """)
  assert late_imports(source) == [(4, "json"), (5, "tensorflow"),
                                  (6, "t2t_keras.io.files")]
