"""What training minimizes: the paper's softmax over the whole vocabulary,
or one over the tokens a decoding constraint allows (``training_objective``).

``softmax`` (section 5.4): the label-smoothed cross-entropy of the model's
distribution over every token (``training.loss``).

``allowed_softmax``: for outputs that a constraint shapes (parsing's trees:
``decoding.tree_constraint``), the model's distribution at each position is
normalized over the tokens the constraint allows there, as transition-based
parsers normalize over the valid actions. With logits z, the allowed set A
(the true token y always in it) and smoothing epsilon spread over A:

    loss = logsumexp_{a in A}(z_a) - (1 - epsilon) z_y
           - epsilon mean_{a in A}(z_a)

A forced token (A = {y}) costs nothing and teaches nothing, so the model
spends itself on the choices the search makes; the searches then
renormalize over the allowed tokens (``Constraint.renormalize``), as the
model was trained. Only the logits of allowed tokens are computed
(``Seq2SeqModel.candidate_logits``): the opening brackets and EOS for every
position, the next leaf and one closing bracket for each, not the
vocabulary.

An objective has ``loss(model, features, label_smoothing)`` -> (loss_sum,
tokens) for the training step and ``score(model, features)`` -> (loss_sum,
tokens, correct) for dev loss and accuracy, in the same normalization.
"""

from keras import ops

from t2t_keras.decoding.steps import sentence_limits
from t2t_keras.errors import UserError
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.models.config import TransformerConfig
from t2t_keras.training.guided_alignment import GuidedAlignment
from t2t_keras.training.loss import real_tokens, smoothed_cross_entropy
from t2t_keras.training.rdrop import RDrop

OBJECTIVES = ("softmax", "allowed_softmax")


class Softmax:
  """The paper's: a softmax over the whole vocabulary."""

  def loss(self, model, features, label_smoothing):
    return smoothed_cross_entropy(model.training_logits(features),
                                  features["targets"], label_smoothing)

  def score(self, model, features):
    logits = model(features, training=False)
    loss_sum, tokens = smoothed_cross_entropy(logits, features["targets"],
                                              0.0)
    predictions = ops.argmax(logits, axis=-1)
    return loss_sum, tokens, _correct(predictions, features["targets"])


class AllowedSoftmax:
  """A softmax over the tokens ``constraint`` allows (module docstring).

  Args:
    constraint: a ``decoding.constraints.Constraint`` with ``along``.
    extra_length: the searches' output length limit past the input length
      (the constraint's length budget depends on it).
  """

  def __init__(self, constraint, extra_length):
    if getattr(constraint, "along", None) is None:
      raise UserError(
          "training_objective=allowed_softmax needs a problem whose "
          "decoding constraint says which tokens each position allows "
          f"(a Constraint with along()); this problem's is {constraint!r}")
    self.constraint = constraint
    self.extra_length = int(extra_length)

  def _candidates(self, model, features, training):
    """(float32 logits [batch, length, C] of the candidates, their
    allowed mask [batch, length, C], the true token's logit [batch,
    length]); candidate columns that are the true token are masked out,
    so that it counts once."""
    inputs, targets = features["inputs"], ops.cast(features["targets"],
                                                   "int32")
    shared_ids, shared_ok, ids, ok = self.constraint.along(
        inputs, targets, sentence_limits(inputs, self.extra_length))
    ids = ops.concatenate([ids, targets[..., None]], axis=-1)
    shared, own = model.candidate_logits(features, shared_ids, ids,
                                         training=training)
    true_logit = own[..., -1]
    logits = ops.concatenate([shared, own[..., :-1]], axis=-1)
    allowed = ops.concatenate([shared_ok, ok], axis=-1)
    every_id = ops.concatenate([
        ops.broadcast_to(shared_ids, ops.shape(shared)), ids[..., :-1]], -1)
    allowed = ops.logical_and(allowed,
                              ops.not_equal(every_id, targets[..., None]))
    return logits, allowed, true_logit

  def _per_token(self, logits, allowed, true_logit, label_smoothing):
    """float32 [batch, length] losses (module docstring)."""
    masked = ops.where(allowed, logits, NEG_INF)
    normalizer = ops.logsumexp(
        ops.concatenate([masked, true_logit[..., None]], -1), axis=-1)
    loss = normalizer - true_logit
    if label_smoothing:
      weight = ops.cast(allowed, "float32")
      size = ops.sum(weight, axis=-1) + 1.0
      mean = (ops.sum(logits * weight, axis=-1) + true_logit) / size
      loss = normalizer - (1.0 - label_smoothing) * true_logit - (
          label_smoothing * mean)
    return loss

  def loss(self, model, features, label_smoothing):
    logits, allowed, true_logit = self._candidates(model, features, True)
    per_token = self._per_token(logits, allowed, true_logit,
                                float(label_smoothing))
    weights = real_tokens(features["targets"])
    return ops.sum(per_token * weights), ops.sum(weights)

  def score(self, model, features):
    logits, allowed, true_logit = self._candidates(model, features, False)
    per_token = self._per_token(logits, allowed, true_logit, 0.0)
    targets = features["targets"]
    weights = real_tokens(targets)
    # Correct where no allowed candidate scores above the true token.
    best_other = ops.max(ops.where(allowed, logits, NEG_INF), axis=-1)
    right = ops.cast(ops.greater_equal(true_logit, best_other), "float32")
    return (ops.sum(per_token * weights), ops.sum(weights),
            ops.sum(right * weights))


def _correct(predictions, targets):
  hits = ops.cast(ops.equal(ops.cast(predictions, "int64"),
                            ops.cast(targets, "int64")), "float32")
  return ops.sum(hits * real_tokens(targets))


def objective_from_hparams(hparams, constraint_fn=lambda: (None, 0),
                           problem=None):
  """The objective ``hparams.training_objective`` names, with R-Drop's
  consistency term where ``rdrop_alpha`` > 0 (``training.rdrop``; the
  softmax only), plus guided alignment where ``alignment_loss_weight`` > 0
  (``training.guided_alignment``; ``problem`` must copy its source,
  ``Problem.copies_source``). ``constraint_fn()`` -> (the problem's decoding
  constraint, the searches' extra_length), asked only by
  ``allowed_softmax``."""
  name = hparams.get("training_objective", "softmax")
  if name == "softmax":
    objective = Softmax()
  elif name == "allowed_softmax":
    objective = AllowedSoftmax(*constraint_fn())
  else:
    raise UserError(f"unknown training_objective {name!r}; expected one of "
                    f"{', '.join(OBJECTIVES)}")
  alpha = float(hparams.get("rdrop_alpha", 0.0))
  weight = float(hparams.get("alignment_loss_weight", 0.0))
  if alpha:
    if name != "softmax" or weight:
      raise UserError(
          f"rdrop_alpha={alpha} works with training_objective=softmax and no "
          f"alignment_loss_weight; these hparams have training_objective="
          f"{name} and alignment_loss_weight={weight}")
    objective = RDrop(objective, alpha)
  if weight:
    if not getattr(problem, "copies_source", False):
      name = getattr(problem, "name", problem)
      raise UserError(
          f"alignment_loss_weight={weight} needs a problem whose targets copy "
          f"all of their source in order (copies_source, e.g. parsing_wsj), "
          f"and {name} does not")
    objective = GuidedAlignment(objective, weight,
                                hparams.get("alignment_layer", -2),
                                hparams.get("alignment_head", 0))
    # By the hparams, before anything is written (the model's own layers
    # are checked again when the step is traced).
    config = TransformerConfig.from_hparams(hparams)
    objective.check(config.num_decoder_layers, config.num_heads)
  return objective
