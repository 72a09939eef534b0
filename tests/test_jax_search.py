"""One search for every backend: the ids of beam search (n-best, length
reward), greedy search, forced prefixes and the parsing constraints
(top-down trees over words, first pieces and placeholders; in-order trees)
from a TensorFlow graph equal those from ``jax.jit`` over the same weights
(decoding.jax_search): every search on the transformer, the unconstrained
and prefixed ones on the relative and rotary models; and the JAX search's
products read the kernels as [d_out, d_in] (kernels.kernel_layout)."""

import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

import search_cases
from t2t_keras.decoding.search import search_function

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
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
  result = subprocess.run(
      [sys.executable, os.path.join(HERE, "jax_search_check.py"),
       str(tmp_path)], capture_output=True, text=True, env=env, timeout=600,
      check=False)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  count = len(list(search_cases.cases()))
  assert f"jax search OK: {count} searches" in result.stdout
  # kernels.kernel_layout: the compiled search reads W as [d_out, d_in].
  assert "kernel layout OK" in result.stdout, result.stdout
  assert "layout probe OK" in result.stdout, result.stdout


def test_layout_probe_keeps_the_held_layout_unless_keras_wins(monkeypatch):
  """kernels.layout_probe's rule: Keras's layout only when its median is
  MARGIN times faster; T2T_KERAS_KERNELS=1 keeps the held one unmeasured."""
  from t2t_keras.kernels import layout_probe  # pylint: disable=g-import-not-at-top
  assert layout_probe.prefer([1.0, 1.2, 0.9], [0.95, 0.9, 2.0])
  assert not layout_probe.prefer([1.0, 1.2, 0.9], [0.8, 0.85, 0.7])
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  monkeypatch.setattr(layout_probe, "_measured", None)  # not called
  assert layout_probe.transposed_faster(((512, 2048),), 4)
