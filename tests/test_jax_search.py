"""One search for every backend: the ids of beam search (n-best, length
reward), greedy search, forced prefixes and the parsing constraints
(top-down trees over words, first pieces and placeholders; in-order trees)
from a TensorFlow graph equal those from ``jax.jit`` over the same weights
(decoding.backends.jax_search): every search on the transformer, the unconstrained
and prefixed ones on the relative and rotary models, with the kernels
packed for kernels.rows_product (kernels.kernel_layout), the transformer's
greedy and beam searches in the transposed and Keras's layouts too; and
rows_product's values, as built here and for older CPUs."""

import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import search_cases
from t2t_keras.decoding.searches.search import search_function

HERE = os.path.dirname(os.path.abspath(__file__))


def test_jax_search_gives_the_graph_ids(tmp_path):
  inputs, prefixes = search_cases.batch()
  expected = {}
  models = {}
  for model_name, name in search_cases.cases():
    if model_name not in models:
      tf.keras.utils.set_random_seed(10 + len(models))
      models[model_name] = search_cases.build(model_name)
      models[model_name].save_weights(
          str(tmp_path / f"{model_name}.weights.h5"))
    model = models[model_name]
    search = search_function(model, search_cases.options(name))
    graph = tf.function(
        lambda x, p, name=name, search=search: search(
            x, search_cases.constraint(name, p)), autograph=False)
    ids, scores = graph(tf.constant(inputs), tf.constant(prefixes))
    expected[f"{model_name}/{name}/ids"] = ids.numpy()
    expected[f"{model_name}/{name}/scores"] = scores.numpy()
  # The checks can fail: searches differ from each other on these models.
  assert not np.array_equal(expected["transformer/greedy/ids"][:, 0],
                            expected["transformer/beam_tree/ids"][:, 0])
  np.savez(tmp_path / "expected.npz", **expected)
  # XLA's LLVM backend unoptimized: the same programs (the ids are what is
  # compared), compiled in two thirds of the time (19 of them here).
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
             XLA_FLAGS="--xla_backend_optimization_level=0")
  result = subprocess.run(
      [sys.executable, os.path.join(HERE, "jax_search_check.py"),
       str(tmp_path)], capture_output=True, text=True, env=env, timeout=600,
      check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  count = len(list(search_cases.cases()))
  assert f"jax search OK: {count} searches" in result.stdout
  # kernels.kernel_layout: the compiled search reads W held, packed or as
  # [d_out, d_in]; kernels.rows_product computes x W.
  assert "kernel layout OK" in result.stdout, result.stdout
  assert "rows product OK" in result.stdout, result.stdout
  assert "layout probe OK" in result.stdout, result.stdout


def test_layout_probe_reads_the_fastest_layout(monkeypatch):
  """kernels.layout_probe's rule: packed where its median is the lowest;
  else transposed unless Keras's median is MARGIN times faster;
  T2T_KERAS_KERNELS=1 reads a held layout unmeasured."""
  from t2t_keras.kernels import layout_probe
  monkeypatch.delenv("T2T_KERAS_KERNELS", raising=False)
  shapes = ((512, 2048),)
  for seconds, packed, want in (
      ({"transposed": [1.0, 1.2, 0.9], "keras": [0.95, 0.9, 2.0],
        "packed": [0.8, 0.9, 0.7]}, True, "packed"),
      ({"transposed": [1.0, 1.2, 0.9], "keras": [0.95, 0.9, 2.0],
        "packed": [1.5, 1.4, 0.5]}, True, "transposed"),
      ({"transposed": [1.0, 1.2, 0.9], "keras": [0.8, 0.85, 0.7]}, False,
       "keras")):
    monkeypatch.setattr(layout_probe, "_measured",
                        lambda *_, s=seconds: s)
    assert layout_probe.fastest(shapes, 4, packed) == want, seconds
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  monkeypatch.setattr(layout_probe, "_measured", None)  # not called
  assert layout_probe.fastest(shapes, 4, True) == "packed"
  assert layout_probe.fastest(shapes, 4, False) == "transposed"


def test_a_machine_keeps_its_layout_for_rounded_weights(monkeypatch,
                                                        tmp_path):
  """With rounded weights the layouts round differently: the first choice
  for a shape is kept in $T2T_KERAS_CACHE and read back however later
  probes would time it (the same lines every run); other rows, another
  precision or a damaged file are measured; float32 is measured a process."""
  from t2t_keras.kernels import layout_probe
  monkeypatch.delenv("T2T_KERAS_KERNELS", raising=False)
  monkeypatch.setenv("T2T_KERAS_CACHE", str(tmp_path))
  shapes = ((512, 2048),)
  native = {"transposed": [1.0], "keras": [1.0], "packed": [0.9],
            "native": [0.5]}
  packed = dict(native, native=[2.0])
  monkeypatch.setattr(layout_probe, "_measured", lambda *_: native)
  assert layout_probe.fastest(shapes, 8, True, "int8") == "native"
  monkeypatch.setattr(layout_probe, "_measured", lambda *_: packed)
  assert layout_probe.fastest(shapes, 8, True, "int8") == "native"
  assert layout_probe.fastest(shapes, 4, True, "int8") == "packed"
  assert layout_probe.fastest(shapes, 8, True, "bfloat16") == "packed"
  assert layout_probe.fastest(shapes, 8, True) == "packed"
  kept, = (tmp_path / "layout_probe").iterdir()
  kept.write_text("{", encoding="utf-8")
  assert layout_probe.fastest(shapes, 8, True, "int8") == "packed"


def test_rows_product_without_a_compiler_is_unavailable_and_says_why(
    tmp_path):
  """kernels.rows_product where its build fails (a missing compiler): not
  available, the reason names the source; nothing is left in the cache."""
  code = ("from t2t_keras.kernels import rows_product as r; "
          "print(r.available()); print(r.unavailable_reason())")
  env = dict(os.environ, CXX=str(tmp_path / "no-such-compiler"),
             T2T_KERAS_CACHE=str(tmp_path / "cache"), JAX_PLATFORMS="cpu")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=env, timeout=300, check=False,
                          cwd=os.path.dirname(HERE))
  assert result.returncode == 0, result.stderr[-3000:]
  available, reason = result.stdout.splitlines()[:2]
  assert available == "False"
  assert "rows_product.cc did not build or load" in reason, reason
  assert "no-such-compiler" in reason, reason
  assert not list((tmp_path / "cache").glob("*"))


@pytest.mark.parametrize("march,width", [("x86-64-v3", 24), ("x86-64", 12)])
def test_rows_product_built_for_older_cpus_gives_numpys_values(
    tmp_path, march, width):
  """rows_product.cc as a CPU without AVX-512 builds it (AVX2: 8-float
  vectors, panels 24 wide; SSE: 4 and 12), through a compiler that swaps
  -march=native for ``march``: the same values as numpy's."""
  if platform.machine() not in ("x86_64", "AMD64"):
    pytest.skip(f"-march={march} is an x86-64 target; this is "
                f"{platform.machine()}")
  wrapper = tmp_path / "cxx"
  wrapper.write_text(
      "#!/bin/sh\nfor a; do shift; [ \"$a\" = -march=native ] && "
      f"a=-march={march}; set -- \"$@\" \"$a\"; done\nexec g++ \"$@\"\n")
  wrapper.chmod(0o755)
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
             CXX=str(wrapper), T2T_KERAS_CACHE=str(tmp_path / "cache"))
  result = subprocess.run(
      [sys.executable, os.path.join(HERE, "jax_search_check.py"),
       "--rows_product"], capture_output=True, text=True, env=env,
      timeout=300, check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  assert f"rows product OK (panels {width} wide)" in result.stdout, (
      result.stdout)
