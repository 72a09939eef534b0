"""What training minimizes (``training_objective``): the paper's softmax.

``softmax`` (section 5.4): the label-smoothed cross-entropy of the model's
distribution over every token (``training.loss``), with R-Drop's
consistency term where ``rdrop_alpha`` > 0 and guided alignment where
``alignment_loss_weight`` > 0, each a wrapper around it.

An objective has ``loss(model, features, label_smoothing)`` -> (loss_sum,
tokens) for the training step and ``score(model, features)`` -> (loss_sum,
tokens, correct) for dev loss and accuracy, in the same normalization.
"""

from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.models.config import TransformerConfig
from t2t_keras.training.guided_alignment import GuidedAlignment
from t2t_keras.training.loss import real_tokens, smoothed_cross_entropy
from t2t_keras.training.rdrop import RDrop

OBJECTIVES = ("softmax",)
# Objectives tried and removed: what a run that names one is told.
RETIRED = {"allowed_softmax": "a softmax over the tokens parsing's "
           "constraint allows lost to the paper's softmax (docs/"
           "experiments.md) and was removed"}


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


def _correct(predictions, targets):
  hits = ops.cast(ops.equal(ops.cast(predictions, "int64"),
                            ops.cast(targets, "int64")), "float32")
  return ops.sum(hits * real_tokens(targets))


def objective_from_hparams(hparams, problem=None):
  """The objective ``hparams.training_objective`` names, with R-Drop's
  consistency term where ``rdrop_alpha`` > 0 (``training.rdrop``), plus
  guided alignment where ``alignment_loss_weight`` > 0
  (``training.guided_alignment``; ``problem`` must copy its source,
  ``Problem.copies_source``)."""
  name = hparams.get("training_objective", "softmax")
  if name in RETIRED:
    raise UserError(f"training_objective={name}: {RETIRED[name]}; use "
                    "training_objective=softmax")
  if name not in OBJECTIVES:
    raise UserError(f"unknown training_objective {name!r}; expected one of "
                    f"{', '.join(OBJECTIVES)}")
  objective = Softmax()
  alpha = float(hparams.get("rdrop_alpha", 0.0))
  weight = float(hparams.get("alignment_loss_weight", 0.0))
  if alpha:
    if weight:
      raise UserError(
          f"rdrop_alpha={alpha} works without alignment_loss_weight; these "
          f"hparams have alignment_loss_weight={weight}")
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
