"""Training over the tokens a constraint allows (training.objective):
parsing's per-position candidates against the search's own masks, the loss
against one written from the full logits, and a run that trains with it
and decodes renormalized."""

import numpy as np
import pytest
import tensorflow as tf

from conftest import wsj_sample_data
from t2t_keras import registry
from t2t_keras import trees
from t2t_keras.decoding.constraints import step_masks
from t2t_keras.decoding.decoder import Decoder
from t2t_keras.decoding.dev_bleu import split_text
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.saved_model import SavedModelDecoder
from t2t_keras.decoding.inorder_constraint import InOrderTreeConstraint
from t2t_keras.errors import UserError
from t2t_keras.export.run import export_run
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras.models.ensemble import Ensemble
from t2t_keras.training.objective import (AllowedSoftmax, Softmax,
                                          objective_from_hparams)
from t2t_keras.training.run import RunConfig, train

TINY = "hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2"
EXTRA = 300


# parsing_wsj's linearizations under test: {name: datagen options}. The
# softmax over allowed tokens needs the top-down constraint's along().
LEAF_KINDS = {"parsing_wsj": {"order": "top-down"},
              "first": {"order": "top-down", "leaves": "first"},
              "xx": {"order": "top-down", "leaves": "xx"}}


@pytest.fixture(scope="module", params=list(LEAF_KINDS))
def parsing_data(request, shared_data, tmp_path_factory):
  """(problem, data_dir) of the sample's first 300 trees, each leaf kind."""
  name = request.param
  data = wsj_sample_data(shared_data, tmp_path_factory.mktemp(name),
                         "parsing_wsj", 300, **LEAF_KINDS[name])
  return registry.problem("parsing_wsj").for_data(data), data


def _batches(problem, data, count=2):
  hparams = registry.hparams("transformer_tiny")
  for features in problem.batches("train", data, hparams, seed=1).take(count):
    yield {k: tf.cast(v, tf.int32) for k, v in features.items()}


def _limits(inputs):
  return tf.reduce_sum(tf.cast(tf.not_equal(inputs, 0), tf.int32), 1) + EXTRA


def _expand(along, batch, length, vocab):
  """The compact candidates as bool [batch, length, vocab]."""
  shared_ids, shared_ok, ids, ok = (t.numpy() for t in along)
  mask = np.zeros([batch, length, vocab], bool)
  mask[:, :, shared_ids] = shared_ok
  for k in range(ids.shape[2]):
    b, t = np.nonzero(ok[:, :, k])
    mask[b, t, ids[b, t, k]] = True
  return mask


def test_candidates_along_outputs_are_the_searchs_masks(parsing_data):
  problem, data = parsing_data
  constraint = problem.decode_constraint(data)
  vocab = len(problem.vocab(data).all_pieces())
  for features in _batches(problem, data):
    inputs, targets = features["inputs"], features["targets"]
    expected = step_masks(constraint, inputs, targets, vocab,
                          _limits(inputs)).numpy()
    got = _expand(constraint.along(inputs, targets, _limits(inputs)),
                  *targets.shape, vocab)
    real = targets.numpy() != 0
    assert (got == expected)[real].all()
    # Every true token is allowed; words' later pieces are forced.
    assert np.take_along_axis(got, targets.numpy()[..., None],
                              -1)[..., 0][real].all()
    assert (got[real].sum(-1) == 1).any()


@pytest.mark.parametrize("parsing_data", ["parsing_wsj"], indirect=True)
def test_allowed_softmax_is_the_renormalized_loss(parsing_data):
  problem, data = parsing_data
  constraint = problem.decode_constraint(data)
  vocab = len(problem.vocab(data).all_pieces())
  model = registry.model("transformer")(
      registry.hparams("transformer_tiny"), vocab)
  model.build()
  objective = AllowedSoftmax(constraint, EXTRA)
  epsilon = 0.1
  for features in _batches(problem, data, 2):
    inputs, targets = features["inputs"], features["targets"]
    logits = model(features, training=False).numpy().astype(np.float64)
    mask = step_masks(constraint, inputs, targets, vocab,
                      _limits(inputs)).numpy()
    masked = np.where(mask, logits, -np.inf)
    log_p = masked - np.log(np.exp(masked - masked.max(-1, keepdims=True))
                            .sum(-1, keepdims=True)) - masked.max(
                                -1, keepdims=True)
    true = np.take_along_axis(log_p, targets.numpy()[..., None], -1)[..., 0]
    mean = np.where(mask, log_p, 0).sum(-1) / mask.sum(-1)
    real = targets.numpy() != 0
    expected = (-(1 - epsilon) * true - epsilon * mean)[real].sum()
    # Under training=False (no dropout) the loss path reads the same model.
    per_token = objective._per_token(  # pylint: disable=protected-access
        *objective._candidates(model, features, False), epsilon)  # pylint: disable=protected-access
    got = float(tf.reduce_sum(per_token * tf.cast(real, tf.float32)))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    loss_sum, tokens, correct = objective.score(model, features)
    np.testing.assert_allclose(float(loss_sum), -true[real].sum(), rtol=1e-5)
    assert float(tokens) == real.sum()
    hits = masked.argmax(-1) == targets.numpy()
    assert float(correct) == hits[real].sum()
    # The base class's candidate logits (gathered from the full logits)
    # are the Transformer's (only the candidates' rows).
    shared_ids = tf.constant([1, 5, 7])
    ids = tf.stack([targets, tf.maximum(targets - 1, 0)], axis=-1)
    fast = model.candidate_logits(features, shared_ids, ids, training=False)
    plain = super(type(model), model).candidate_logits(
        features, shared_ids, ids, training=False)
    for a, b in zip(fast, plain):
      np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_objectives_by_name():
  hparams = registry.hparams("transformer_tiny")
  assert isinstance(objective_from_hparams(hparams), Softmax)
  hparams.training_objective = "allowed_softmax"
  with pytest.raises(UserError, match="needs a problem whose decoding"):
    objective_from_hparams(hparams, lambda: (None, 50))
  in_order = InOrderTreeConstraint(["<pad>", "<EOS>", "\u2581(S", "\u2581)S"])
  with pytest.raises(UserError, match="needs a problem whose decoding"):
    objective_from_hparams(hparams, lambda: (in_order, 50))
  hparams.training_objective = "alowed_softmax"
  with pytest.raises(UserError, match="allowed_softmax"):
    objective_from_hparams(hparams)


@pytest.mark.parametrize("parsing_data", ["parsing_wsj"], indirect=True)
def test_a_run_trains_over_the_allowed_tokens_and_decodes_renormalized(
    parsing_data, tmp_path):
  problem, data = parsing_data
  out = str(tmp_path / "run")
  lines = []
  metrics = train(RunConfig(
      "parsing_wsj", "transformer_tiny", out, data_dir=data, train_steps=3,
      hparams_overrides=TINY + ",training_objective=allowed_softmax",
      eval_bleu=False, eval_steps=2), log=lines.append)
  # A forced token costs nothing, so the dev loss a token (two dev batches)
  # is far below a softmax over 1,000 pieces at random weights (log 1000 =
  # 6.9).
  assert 0 < metrics["loss"] < 3.5, (metrics, lines)
  model, _, _, _ = load_model_from_dir(out)
  assert model.allowed_softmax
  with pytest.raises(UserError, match="do not ensemble"):
    Ensemble([model, model])
  assert not problem.decode_constraint(data).renormalize
  decoder = Decoder(model, problem.vocab(data),
                    decode_hparams("beam_size=2,extra_length=20",
                                   problem.decode_defaults),
                    constraint=problem.decode_constraint(data))
  assert decoder.constraint.renormalize
  _, sources, _ = split_text(problem, data, "dev", 10)
  outputs = decoder.decode(sources)
  for text, source in zip(outputs, sources):
    assert trees.well_formed(text.split(), source.split(), "words"), text
  # The SavedModel renormalizes too: it decodes what the checkpoint does.
  export_dir = export_run("parsing_wsj", out, data,
                          decode_overrides="beam_size=2,extra_length=20",
                          export_dir=str(tmp_path / "export"), version=1,
                          log=lambda _: None)
  exported = SavedModelDecoder(export_dir).decode(sources)
  assert exported == outputs
