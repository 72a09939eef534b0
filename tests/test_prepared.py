"""models.prepared: the model prepared for decoding keeps the contract and
steps as the training model's own contract does (models.incremental with
the layers' products), with its faster products; the paper's layers and
the models carry none of them."""

import ast
import os

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import t2t_keras
from t2t_keras.models.ensemble import Ensemble
from t2t_keras.models.prepared import prepare_for_decoding

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = 23
SMALL = ("hidden_size=16,filter_size=32,num_heads=2,"
         "layer_prepostprocess_dropout=0.0")
DECODING_KERNELS = {"kernel_layout", "one_row", "stored_transpose",
                    "step_attention", "weights_once", "rows_product",
                    "layout_probe", "quantize"}


def imported_names(path):
  """Every module name a file imports, ``from a import b`` giving a and
  a.b."""
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read())
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      yield node.module
      yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_layers_and_models_read_no_decoding_kernel():
  """Only the prepared model's own files import the decoding fast paths."""
  found = []
  for folder in ("layers", "models"):
    for root, _, files in os.walk(os.path.join(REPO, "t2t_keras", folder)):
      if os.path.basename(root) == "prepared":
        continue
      for name in files:
        if name.endswith(".py"):
          path = os.path.join(root, name)
          found += [(os.path.relpath(path, REPO), imported)
                    for imported in imported_names(path)
                    if imported.split(".")[-1] in DECODING_KERNELS]
  assert not found, found


def tiny(name, seed):
  """A small model whose biases are not zero (as trained ones are not)."""
  import keras
  keras.utils.set_random_seed(seed)
  model = t2t_keras.build_model(f"{name}_tiny", vocab_size=VOCAB, model=name,
                                hparams_overrides=SMALL)
  rng = np.random.RandomState(seed)
  for weight in model.weights:
    if weight.path.endswith("bias"):
      weight.assign(rng.normal(0, 0.5, weight.shape).astype("float32"))
  return model


def ids(seed, batch, length):
  return np.random.RandomState(seed).randint(
      2, VOCAB, size=(batch, length)).astype("int32")


def stepper(model, length, hypotheses=None):
  """A tf.function (inputs [batch, source length], targets [batch,
  ``length``]) -> (logits [batch, length, vocab], the last cache):
  ``model``'s contract stepped over the targets (the prepared model's,
  read for ``hypotheses``, where given), for any batch."""

  def run(inputs, targets):
    def steps(decoding):
      cache = decoding.init_cache(decoding.encode(inputs), 12)
      found, previous = [], tf.zeros_like(targets[:, 0])
      for t in range(length):
        logits, cache = decoding.decode_step(previous, t, cache)
        found.append(logits)
        previous = targets[:, t]
      return tf.stack(found, 1), cache

    if hypotheses is None:
      return steps(model)
    with model.reading(hypotheses) as decoding:
      return steps(decoding)

  return tf.function(run, autograph=False, input_signature=[
      tf.TensorSpec([None, None], tf.int32),
      tf.TensorSpec([None, length], tf.int32)])


def stepped(model, inputs, targets, hypotheses=None):
  """``stepper``'s logits and cache for these ids, traced for them."""
  traced = stepper(model, targets.shape[1], hypotheses)
  return traced(tf.constant(inputs), tf.constant(targets))


@pytest.mark.parametrize("name,fixed", [
    ("transformer", False), ("transformer", True),
    ("transformer_relative", True), ("transformer_rotary", True)])
def test_the_prepared_model_steps_as_the_model(name, fixed, monkeypatch):
  """With the kernels on, at one sentence (the one-row products) and at
  three, greedy's and beam's readings: the model's own logits, and a cache
  of keys and values only. Fixed weights (stored W^T and stacks) for each
  variant; without them (W^T a batch, three products) the products do not
  depend on the variant's hooks."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  model = tiny(name, 1)
  prepared = prepare_for_decoding(model, fixed_weights=fixed)
  assert len(prepared.variables()) == (
      1 + model.config.num_decoder_layers if fixed else 0)
  # Each traced once, for any batch (one sentence takes the one-row
  # branch of the same program).
  own = stepper(model, 5)
  readings = {h: stepper(prepared, 5, h) for h in (1, 4)}
  for batch, hypotheses in ((1, 1), (3, 1), (3, 4)):
    inputs, targets = ids(2, batch, 6), ids(3, batch, 5)
    want, _ = own(inputs, targets)
    got, cache = readings[hypotheses](inputs, targets)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4,
                               atol=1e-4)
  assert set(cache) == {"layers", "memory_bias"}
  for layer in cache["layers"]:
    assert set(layer) == {"self", "cross"}
    assert all(set(part) == {"key", "value"} for part in layer.values())


def test_a_prepared_ensemble_is_its_prepared_members():
  """An ensemble prepared: each member prepared, the members' mean as the
  ensemble's own contract gives it."""
  members = [tiny("transformer", 4), tiny("transformer_relative", 5)]
  ensemble = Ensemble(members)
  prepared = prepare_for_decoding(ensemble, fixed_weights=True)
  assert len(prepared.members) == 2
  assert len(prepared.variables()) == sum(
      1 + m.config.num_decoder_layers for m in members)
  inputs, targets = ids(6, 2, 5), ids(7, 2, 4)
  want, _ = stepped(ensemble, inputs, targets)
  got, _ = stepped(prepared, inputs, targets, 2)
  np.testing.assert_allclose(got.numpy(), ops.convert_to_numpy(want),
                             rtol=1e-4, atol=1e-4)
