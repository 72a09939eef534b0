"""Run by test_jax_search.py under KERAS_BACKEND=jax: every search of
search_cases.py through ``decoding.jax_search.JaxSearch`` (jax.jit) over
the weights the TensorFlow side saved, compared with the ids it found.

    KERAS_BACKEND=jax python tests/jax_search_check.py DIR

DIR holds MODEL.weights.h5 for each model and expected.npz
({MODEL/SEARCH/ids, MODEL/SEARCH/scores}). Prints one line a mismatch and
"jax search OK: N searches" when every one gives the same ids; exits 1
otherwise. Then, for the transformer's greedy search, whether its compiled
program multiplies by [d_out, d_in] kernels (``kernels.kernel_layout``):
"kernel layout OK" or what it found. It never imports TensorFlow.
"""

import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import keras  # pylint: disable=g-import-not-at-top,wrong-import-position

import search_cases  # pylint: disable=g-import-not-at-top,wrong-import-position
from t2t_keras.decoding.jax_search import JaxSearch  # pylint: disable=g-import-not-at-top,wrong-import-position


def main(folder):
  assert keras.backend.backend() == "jax", keras.backend.backend()
  expected = np.load(os.path.join(folder, "expected.npz"))
  inputs, prefixes = search_cases.batch()
  bad = done = 0
  models = {}
  for model_name, name in search_cases.cases():
    if model_name not in models:
      models[model_name] = search_cases.build(model_name)
      models[model_name].load_weights(
          os.path.join(folder, f"{model_name}.weights.h5"))
    model = models[model_name]
    kind = search_cases.SEARCHES[name][1]
    search = JaxSearch(model, search_cases.options(name),
                       search_cases.constraint(name) if kind != "prefix"
                       else None, search_cases.WORD_STARTS)
    # Each search in kernel_layout's layout; the transformer's greedy and
    # beam searches in Keras's as well (the probe picks either).
    layouts = ((True, False) if model_name == "transformer" and
               name in ("greedy", "beam_nbest") else (True,))
    done += 1
    key = f"{model_name}/{name}"
    want = expected[key + "/ids"]
    for held in layouts:
      ids, scores = search(inputs, prefixes if kind == "prefix" else None,
                           held_layout=held)
      ids, scores = np.asarray(ids), np.asarray(scores)
      if ids.shape != want.shape or (ids != want).any():
        bad += 1
        print(f"MISMATCH {key} (held layout {held}): jax {ids.tolist()} "
              f"tensorflow {want.tolist()}")
      elif not np.allclose(scores, expected[key + "/scores"], atol=1e-4,
                           rtol=1e-4):
        bad += 1
        print(f"SCORES {key} (held layout {held}): jax {scores.tolist()} "
              f"tensorflow {expected[key + '/scores'].tolist()}")
  assert "tensorflow" not in sys.modules, "the JAX search imported TensorFlow"
  if bad:
    sys.exit(1)
  print(f"jax search OK: {done} searches")
  check_kernel_layout(models["transformer"], inputs)


def check_kernel_layout(model, inputs):
  """Every product of rows by a matrix in the compiled greedy search
  contracts the matrix's second dimension (W as [d_out, d_in], the
  embedding as [vocab, d_model]), no [d_model, vocab] transpose of the
  embedding is formed, and each decoder layer's self-attention step makes
  its queries, keys and values in one product ([rows, 3 d_model])."""
  search = JaxSearch(model, search_cases.options("greedy"))
  if search._layout is None:  # pylint: disable=protected-access
    print("kernel layout: off (T2T_KERAS_KERNELS=0 or not a CPU)")
    sys.exit(1)
  values = search._layout.outside([v.value for v in search.variables])  # pylint: disable=protected-access
  program = search._run.lower(values, inputs, None, True).compile().as_text()  # pylint: disable=protected-access
  contracted = re.findall(r"lhs_contracting_dims=\{1\}, "
                          r"rhs_contracting_dims=\{(\d)\}", program)
  transposed = re.findall(rf"f32\[{model.softmax_weights.hidden_size},"
                          rf"{search_cases.VOCAB}\]", program)
  hidden = model.softmax_weights.hidden_size
  stacked = re.findall(rf"= f32\[\d+,{3 * hidden}\]\S* dot\(", program)
  layers = len(model.decoder.blocks)
  if (not contracted or set(contracted) != {"1"} or transposed or
      len(stacked) != layers):
    print(f"kernel layout: contracted dimensions {sorted(set(contracted))} "
          f"of {len(contracted)} row products; {len(transposed)} "
          f"[d_model, vocab] arrays; {len(stacked)} stacked query-key-value "
          f"products for {layers} decoder layers")
    sys.exit(1)
  print(f"kernel layout OK: {len(contracted)} row products, {len(stacked)} "
        "stacked")
  # The measured choice (kernels.layout_probe) runs on the model's shapes
  # and is made once: a second search of the batch reads the same layout.
  os.environ.pop("T2T_KERAS_KERNELS", None)
  first = search.held_layout(inputs.shape[0])
  assert isinstance(first, bool) and search.held_layout(
      inputs.shape[0]) == first
  search(inputs)
  print(f"layout probe OK: held layout {first} at {inputs.shape[0]} rows")


if __name__ == "__main__":
  main(sys.argv[1])
