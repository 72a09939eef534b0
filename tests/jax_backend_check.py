"""Run by test_jax_backend.py under KERAS_BACKEND=jax (and by hand on a GPU
machine that has JAX but no TensorFlow): the forward pass, causality and the
cached decoding step of the same model code, on the JAX backend."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras
from keras import ops

import t2t_keras


def main():
  assert keras.backend.backend() == "jax", keras.backend.backend()
  for overrides in ("", ",norm_position=pre,pos=emb"):
    model = t2t_keras.build_model(
        "transformer_tiny", vocab_size=19,
        hparams_overrides="hidden_size=32,filter_size=64" + overrides)
    rng = np.random.RandomState(0)
    inputs = rng.randint(2, 19, size=(2, 5)).astype("int32")
    inputs[1, 3:] = 0
    targets = rng.randint(2, 19, size=(2, 6)).astype("int32")
    full = ops.convert_to_numpy(model({"inputs": inputs, "targets": targets}))
    assert full.shape == (2, 6, 19) and full.dtype == np.float32
    changed = targets.copy()
    changed[:, 4:] = 2
    later = ops.convert_to_numpy(model({"inputs": inputs,
                                        "targets": changed}))
    np.testing.assert_allclose(later[:, :5], full[:, :5], atol=1e-5)
    cache = model.init_cache(model.encode(inputs), max_length=8)
    previous = np.zeros((2,), "int32")
    for t in range(6):
      logits, cache = model.decode_step(previous, t, cache)
      np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, t],
                                 atol=1e-5, rtol=1e-5)
      previous = targets[:, t]
  print(f"jax backend OK: keras {keras.__version__}, "
        f"devices {[str(d) for d in __import__('jax').devices()]}")


if __name__ == "__main__":
  main()
