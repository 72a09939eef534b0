"""Guided alignment (training.guided_alignment): the targets it derives
from copying, the term it adds to the loss, and a run whose head learns to
look where the output copies from."""

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from conftest import wsj_sample_data
from t2t_keras import registry
from t2t_keras.errors import UserError
from t2t_keras.layers.attention_record import recording
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras.models.transformer import shift_right
from t2t_keras.training.guided_alignment import (GuidedAlignment, copied,
                                                last_position,
                                                pointer_positions)
from t2t_keras.training.objective import Softmax, objective_from_hparams
from t2t_keras.training.run import RunConfig, train

PARSING = registry.problem("parsing_wsj")
TINY = ("hidden_size=32,filter_size=64,num_hidden_layers=2,num_heads=2,"
        "layer_prepostprocess_dropout=0.0")


# pointer_positions: source pieces 5 6 7 and EOS; the tree (S 5 (NP 6 7 )NP )S, brackets 20-23.
INPUTS = np.array([[5, 6, 7, 1, 0, 0]], "int32")
TARGETS = np.array([[20, 5, 21, 6, 7, 22, 23, 1]], "int32")


def test_the_pointer_rests_on_the_next_word_to_copy():
  positions = ops.convert_to_numpy(
      pointer_positions(shift_right(TARGETS), INPUTS))[0]
  np.testing.assert_array_equal(positions, [0, 0, 1, 1, 2, 3, 3, 3])
  # Wherever the target is a word, it is the source token pointed at.
  for t, token in enumerate(TARGETS[0]):
    if token in INPUTS[0] and token > 1:
      assert INPUTS[0, positions[t]] == token
  # Once every word is copied, it rests on the EOS, never on padding.
  assert INPUTS[0, positions[-1]] == 1


def test_padding_and_eos_are_never_counted_as_copies():
  ids = np.array([[0, 1, 5, 0]], "int32")
  inputs = np.array([[5, 1, 0, 0]], "int32")
  np.testing.assert_array_equal(ops.convert_to_numpy(copied(ids, inputs)),
                                [[False, False, True, False]])
  np.testing.assert_array_equal(
      ops.convert_to_numpy(last_position(np.zeros((1, 3), "int32"))), [0])


@pytest.fixture(scope="module")
def parsing_data(shared_data, tmp_path_factory):
  """The data_dir of the WSJ sample's first 300 trees (parsing_wsj)."""
  return wsj_sample_data(shared_data, tmp_path_factory.mktemp("guided"),
                         "parsing_wsj", 300)


def _batch(data, hparams):
  problem = registry.problem("parsing_wsj")
  for features in problem.batches("train", data, hparams, seed=1).take(1):
    return {k: tf.cast(v, tf.int32) for k, v in features.items()}


def _tiny(**values):
  hparams = registry.hparams("transformer_tiny")
  hparams.parse(TINY)
  for name, value in values.items():
    setattr(hparams, name, value)
  return hparams


def _head_nll(model, features, layer=-2, head=0):
  """Mean -log weight of the aligned source position, eagerly."""
  with recording() as weights:
    model(features, training=False)
  w = weights[model.attention_layers()["encoder_decoder"][layer]]
  w = w.numpy()[:, head]
  targets = features["targets"].numpy()
  positions = pointer_positions(shift_right(features["targets"]),
                                features["inputs"]).numpy()
  picked = np.take_along_axis(w, positions[..., None], -1)[..., 0]
  real = targets != 0
  return float(-np.log(np.maximum(picked, 1e-9))[real].mean()), real.sum()


def test_each_copied_piece_is_aligned_to_itself(parsing_data):
  features = _batch(parsing_data, _tiny())
  inputs, targets = features["inputs"].numpy(), features["targets"].numpy()
  positions = pointer_positions(shift_right(features["targets"]),
                                features["inputs"]).numpy()
  checked = 0
  for b in range(targets.shape[0]):
    source = set(inputs[b][inputs[b] > 1].tolist())
    for t in range(targets.shape[1]):
      if targets[b, t] in source:
        assert inputs[b, positions[b, t]] == targets[b, t]
        checked += 1
      elif targets[b, t] == 1:        # EOS: everything copied
        assert inputs[b, positions[b, t]] == 1
  assert checked > 100


def test_the_loss_adds_the_heads_cross_entropy(parsing_data):
  hparams = _tiny(alignment_loss_weight=0.5)
  features = _batch(parsing_data, hparams)
  vocab = len(registry.problem("parsing_wsj").vocab(parsing_data)
              .all_pieces())
  model = registry.model("transformer")(hparams, vocab)
  model.build()
  objective = objective_from_hparams(hparams, problem=PARSING)
  assert isinstance(objective, GuidedAlignment)
  assert isinstance(objective.objective, Softmax)
  # Without dropout the training pass is the eager one.
  guided, tokens = objective.loss(model, features, 0.1)
  plain, same_tokens = Softmax().loss(model, features, 0.1)
  assert float(tokens) == float(same_tokens)
  nll, count = _head_nll(model, features)
  np.testing.assert_allclose(float(guided - plain), 0.5 * nll * count,
                             rtol=1e-4)
  # Dev loss and accuracy stay the next-token ones.
  for a, b in zip(objective.score(model, features),
                  Softmax().score(model, features)):
    assert float(a) == float(b)


def test_bad_settings_are_named():
  with pytest.raises(UserError, match="alignment_loss_weight"):
    GuidedAlignment(Softmax(), -1.0)
  # By the hparams, before a model exists (t2t-trainer asks before it
  # writes the run directory) ...
  hparams = _tiny(alignment_loss_weight=1.0, alignment_layer=5)
  with pytest.raises(UserError, match="alignment_layer=5 names no decoder"):
    objective_from_hparams(hparams, problem=PARSING)
  hparams.alignment_layer, hparams.alignment_head = -1, 2
  with pytest.raises(UserError, match="alignment_head=2 is not one of"):
    objective_from_hparams(hparams, problem=PARSING)
  # ... and by the model's own layers when the step is traced.
  model = registry.model("transformer")(hparams, 50)
  model.build()
  ids = tf.ones((1, 3), tf.int32)
  for layer, head, message in ((5, 0, "alignment_layer=5"),
                               (-1, 2, "alignment_head=2")):
    with pytest.raises(UserError, match=message):
      GuidedAlignment(Softmax(), 1.0, layer, head).loss(
          model, {"inputs": ids, "targets": ids}, 0.1)
  # Only where every target copies its source in order.
  for name, options in (("translate_ende", {}),
                        ("parsing_wsj", dict(order="top-down", leaves="xx")),
                        ("parsing_wsj",
                         dict(order="top-down", leaves="first"))):
    with pytest.raises(UserError, match=f"copy .* {name} does not"):
      objective_from_hparams(
          hparams, problem=registry.problem(name).configure(**options))


def test_a_run_teaches_the_head_where_the_output_copies_from(
    parsing_data, tmp_path):
  # The training step is a traced function: the head's weights are
  # recorded inside the trace and the term reaches the gradient.
  out = str(tmp_path / "run")
  train(RunConfig("parsing_wsj", "transformer_tiny", out,
                  data_dir=parsing_data, train_steps=40,
                  hparams_overrides=TINY.replace("num_hidden_layers=2",
                                                 "num_hidden_layers=1") +
                  ",alignment_layer=-1,alignment_loss_weight=5.0,"
                  "learning_rate_warmup_steps=20", eval_bleu=False,
                  eval_steps=1),
        log=lambda _: None)
  model, hparams, _, _ = load_model_from_dir(out)
  features = _batch(parsing_data, hparams)
  trained, _ = _head_nll(model, features, layer=-1)
  # Attention spread evenly over a row's source tokens scores -log(1/n),
  # 4.06 here. One layer (the guided one, -1, the only one) trained 40
  # steps: without the term the head is at 5.30, with it well below (2.43).
  lengths = (features["inputs"].numpy() != 0).sum(1)
  real = features["targets"].numpy() != 0
  even = float((np.log(lengths)[:, None] * real).sum() / real.sum())
  assert trained < 0.8 * even, (trained, even)
