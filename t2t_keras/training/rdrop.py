"""R-Drop (Liang et al., NeurIPS 2021, "R-Drop: Regularized Dropout for
Neural Networks"): each example goes through the model twice, under two
dropout masks, and a symmetric KL divergence pulls the two output
distributions together (``rdrop_alpha``).

With P1 and P2 the two passes' distributions at one target position and
alpha the weight, the paper's loss of a position is

    CE(P1) + CE(P2) + alpha / 2 * (KL(P1 || P2) + KL(P2 || P1)),

and since KL(P1 || P2) + KL(P2 || P1) = sum_v (p1_v - p2_v)(log p1_v -
log p2_v), one sum gives both directions. Here that loss is halved, so that
with alpha 0 it is the plain objective's per token (the trainer divides by
the batch's token count, counted once):

    (CE(P1) + CE(P2)) / 2 + alpha / 4 * sum_v (p1_v - p2_v)(log p1_v - log p2_v).

The CE terms are the label-smoothed cross-entropy of section 5.4
(``training.loss``); the KL is on the unsmoothed model distributions, as
the paper's. The two passes are one pass over the batch stacked on itself
(the dropout masks differ element by element), so a step costs what a
step of twice the batch costs and the KL's float32 softmaxes besides
(1.17x a plain step of the same tokens on Multi30k's 8,000-piece
vocabulary, docs/recipes.md): a recipe that keeps its step cost halves its
batch. Dev loss and accuracy (``score``) are the wrapped objective's.
Wrapped objectives are the paper's softmax only.
"""

from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.training.loss import real_tokens, smoothed_cross_entropy


def symmetric_kl(first, second):
  """Logits [..., V] twice (any float dtype) -> float32 [...]:
  KL(P1 || P2) + KL(P2 || P1) of their softmaxes."""
  log_p = ops.log_softmax(ops.cast(first, "float32"), axis=-1)
  log_q = ops.log_softmax(ops.cast(second, "float32"), axis=-1)
  return ops.sum((ops.exp(log_p) - ops.exp(log_q)) * (log_p - log_q),
                 axis=-1)


def _stacked(features):
  """Every feature [batch, ...] -> [2 * batch, ...], the batch twice."""
  return {key: ops.concatenate([value, value], axis=0)
          for key, value in features.items()}


class RDrop:
  """The paper's softmax with R-Drop's consistency term (module docstring).

  Args:
    objective: the paper's softmax objective (``training.objective.
      Softmax``), whose ``score`` this keeps.
    alpha: the KL term's weight, > 0 (the paper's alpha; 5 for its
      IWSLT translation models).
  """

  def __init__(self, objective, alpha):
    alpha = float(alpha)
    if alpha <= 0:
      raise UserError(f"rdrop_alpha must be > 0 to use R-Drop, got {alpha}")
    self.objective = objective
    self.alpha = alpha

  def loss(self, model, features, label_smoothing):
    """-> (loss_sum, tokens), float32 scalars; tokens counts ``features``'
    real target tokens once."""
    stacked = _stacked(features)
    logits = model.training_logits(stacked)
    ce_sum, _ = smoothed_cross_entropy(logits, stacked["targets"],
                                       label_smoothing)
    first, second = ops.split(logits, 2, axis=0)
    weights = real_tokens(features["targets"])
    kl_sum = ops.sum(symmetric_kl(first, second) * weights)
    return 0.5 * ce_sum + 0.25 * self.alpha * kl_sum, ops.sum(weights)

  def score(self, model, features):
    return self.objective.score(model, features)
