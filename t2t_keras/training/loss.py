"""Label-smoothed cross-entropy over non-padding target tokens (section 5.4).

With smoothing epsilon the target distribution is (1 - epsilon) on the true
token plus epsilon / V on every token (Szegedy et al., the paper's [36]), so
with logits z and log p = z - logsumexp(z) the loss of one token is

    -(1 - epsilon) log p_true - (epsilon / V) sum_v log p_v
      = logsumexp(z) - (1 - epsilon) z_true - epsilon mean_v(z_v)

written plainly below and left to autodiff and the compiler (XLA under
JAX). Where ``kernels.enabled()`` (TensorFlow on the CPU) ``kernels.loss``
computes the same values and gradient as two XLA kernels.
"""

from keras import ops

from t2t_keras import kernels
from t2t_keras.ids import PAD_ID


def per_token_loss(logits, targets, label_smoothing):
  """logits [..., V] (any float dtype), int32 targets [...] -> float32 loss
  [...]."""
  z = ops.cast(logits, "float32")
  true_logit = ops.take_along_axis(z, targets[..., None], axis=-1)[..., 0]
  return (ops.logsumexp(z, axis=-1) - (1.0 - label_smoothing) * true_logit
          - label_smoothing * ops.mean(z, axis=-1))


def smoothed_cross_entropy(logits, targets, label_smoothing, pad_id=PAD_ID):
  """Sum of per-token losses and the number of real tokens.

  Args:
    logits: [batch, length, vocab], float32 or bfloat16 (the loss is
      computed in float32 either way).
    targets: int [batch, length]; ``pad_id`` positions do not count.
    label_smoothing: epsilon_ls.
  Returns:
    (loss_sum, token_count), float32 scalars. Divide the global sums (over
    replicas and accumulated micro-batches) to get the mean per token.
  """
  targets = ops.cast(targets, "int32")
  if kernels.enabled():
    from t2t_keras.kernels import loss as loss_kernel
    per_token = loss_kernel.per_token_loss(logits, targets,
                                           float(label_smoothing))
  else:
    per_token = per_token_loss(logits, targets, float(label_smoothing))
  weights = real_tokens(targets, pad_id)
  return ops.sum(per_token * weights), ops.sum(weights)


def real_tokens(targets, pad_id=PAD_ID):
  """float32 [batch, length]: 1 at real tokens of int ``targets``, 0 at
  padding."""
  return ops.cast(ops.not_equal(targets, pad_id), "float32")


def count_tokens(targets, pad_id=PAD_ID):
  """The number of real tokens in int ``targets`` [batch, length] (float32
  scalar), as ``smoothed_cross_entropy`` counts them."""
  return ops.sum(real_tokens(targets, pad_id))
