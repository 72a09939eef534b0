"""Run by test_jax_search.py under KERAS_BACKEND=jax: every search of
search_cases.py through ``decoding.backends.jax_search.JaxSearch`` (jax.jit) over
the weights the TensorFlow side saved, compared with the ids it found.

    KERAS_BACKEND=jax python tests/jax_search_check.py DIR
    KERAS_BACKEND=jax python tests/jax_search_check.py --rows_product

DIR holds MODEL.weights.h5 for each model and expected.npz
({MODEL/SEARCH/ids, MODEL/SEARCH/scores}). Prints one line a mismatch and
"jax search OK: N searches" when every one gives the same ids; exits 1
otherwise. Then, for the transformer's greedy search, whether its compiled
program multiplies by the kernels held (``kernels.kernel_layout``): "kernel
layout OK" or what it found; and ``kernels.rows_product``'s values against
numpy's: "rows product OK". It never imports TensorFlow.
"""

import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import keras

import search_cases
from t2t_keras.decoding.backends.jax_search import JaxSearch


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
    # Every search in kernel_layout's first layout (packed where
    # rows_product builds); the transformer's greedy and beam searches in
    # every layout, Keras's too (the probe picks any; a layout changes the
    # products, not the search).
    layouts = [name for name in search.layouts() if name != "keras"][:1]
    if model_name == "transformer" and name in ("greedy", "beam_nbest"):
      layouts = [name for name in search.layouts() if name != "keras"] + [
          "keras"]
    done += 1
    key = f"{model_name}/{name}"
    want = expected[key + "/ids"]
    for held in layouts:
      ids, scores = search(inputs, prefixes if kind == "prefix" else None,
                           layout=held)
      ids, scores = np.asarray(ids), np.asarray(scores)
      if ids.shape != want.shape or (ids != want).any():
        bad += 1
        print(f"MISMATCH {key} ({held} layout): jax {ids.tolist()} "
              f"tensorflow {want.tolist()}")
      elif not np.allclose(scores, expected[key + "/scores"], atol=1e-4,
                           rtol=1e-4):
        bad += 1
        print(f"SCORES {key} ({held} layout): jax {scores.tolist()} "
              f"tensorflow {expected[key + '/scores'].tolist()}")
  assert "tensorflow" not in sys.modules, "the JAX search imported TensorFlow"
  if bad:
    sys.exit(1)
  print(f"jax search OK: {done} searches")
  check_kernel_layout(models["transformer"], inputs)
  check_rows_product()


def check_kernel_layout(model, inputs):
  """The compiled greedy search in each held layout (a step's matrices,
  models.prepared.held_matrices; the encoder reads Keras's). Transposed:
  each of a step's products of rows by a matrix contracts the matrix's
  second dimension (W as [d_out, d_in], the embedding as [vocab,
  d_model]). Packed: each is a call of rows_product's handler. In both no
  [d_model, vocab] transpose of the embedding is formed, and each decoder
  layer's self-attention step makes its queries, keys and values in one
  product ([rows, 3 d_model])."""
  from t2t_keras.kernels import rows_product
  search = JaxSearch(model, search_cases.options("greedy"))
  if search.layouts() != ("keras", "packed", "transposed"):
    print(f"kernel layout: only {search.layouts()} (T2T_KERAS_KERNELS=0, not "
          f"a CPU, or {rows_product.unavailable_reason()})")
    sys.exit(1)
  hidden = model.softmax_weights.hidden_size
  layers = len(model.decoder.blocks)
  for layout in ("transposed", "packed"):
    values = [v.value for v in search.variables]
    arrays = search._held.outside(values, layout)
    program = search._run.lower(values, arrays, inputs, None, layout
                                ).compile().as_text()
    contracted = re.findall(r"lhs_contracting_dims=\{1\}, "
                            r"rhs_contracting_dims=\{(\d)\}", program)
    transposed = re.findall(rf"f32\[{hidden},{search_cases.VOCAB}\]",
                            program)
    if layout == "transposed":
      stacked = re.findall(rf"= f32\[\d+,{3 * hidden}\]\S* dot\(", program)
      wrong = contracted.count("1") < 6 * layers + 1
    else:
      stacked = re.findall(rf"= f32\[\d+,{3 * hidden}\]\S* custom-call\(",
                           program)
      calls = program.count(f'custom_call_target="{rows_product.TARGET}"')
      wrong = calls < 6 * layers + 1
    if wrong or transposed or len(stacked) != layers:
      print(f"kernel layout {layout}: contracted dimensions "
            f"{sorted(set(contracted))} of {len(contracted)} row products; "
            f"{len(transposed)} [d_model, vocab] arrays; {len(stacked)} "
            f"stacked query-key-value products for {layers} decoder layers")
      sys.exit(1)
  print(f"kernel layout OK: {len(contracted)} row products, {len(stacked)} "
        "stacked")
  # The measured choice (kernels.layout_probe) runs on the model's shapes
  # and is made once: a second search of the batch reads the same layout.
  os.environ.pop("T2T_KERAS_KERNELS", None)
  first = search.layout(inputs.shape[0])
  assert first in search.layouts() and search.layout(
      inputs.shape[0]) == first
  search(inputs)
  print(f"layout probe OK: {first} layout at {inputs.shape[0]} rows")


def check_rows_product():
  """x W through rows_product's handler equals numpy's to float32 rounding:
  rows 1 to 5 (its four-row blocks and what is left), over ROWS_MAX (XLA's
  dot), any batch shape; columns a panel, within one, over several with a
  part panel left; pack and unpack are inverses."""
  import jax
  import jax.numpy as jnp
  from t2t_keras.kernels import rows_product
  rng = np.random.RandomState(0)
  width = rows_product.panel_width()
  for lead in ((1,), (2,), (3,), (4,), (5,), (2, 3, 1),
               (rows_product.ROWS_MAX + 3,)):
    for k, n in ((32, width), (32, 20), (48, 2 * width + 5)):
      x = rng.standard_normal(lead + (k,)).astype(np.float32)
      w = rng.standard_normal((k, n)).astype(np.float32)
      packed = rows_product.pack(jnp.asarray(w))
      assert packed.shape == (-(-n // width), k, width)
      assert np.array_equal(np.asarray(rows_product.unpack(packed, n)), w)
      got = np.asarray(jax.jit(rows_product.product, static_argnums=2)(
          jnp.asarray(x), packed, n))
      want = x.astype(np.float64) @ w.astype(np.float64)
      assert got.shape == lead + (n,), (got.shape, lead, n)
      assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (lead, k, n)
  print(f"rows product OK (panels {width} wide)")


if __name__ == "__main__":
  if sys.argv[1] == "--rows_product":   # that check alone (any build)
    check_rows_product()
  else:
    main(sys.argv[1])
