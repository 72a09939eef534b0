"""Label-smoothed cross-entropy over non-padding target tokens (section 5.4).

With smoothing epsilon the target distribution is (1 - epsilon) on the true
token plus epsilon / V on every token (Szegedy et al., the paper's [36]).
"""

from keras import ops


def smoothed_cross_entropy(logits, targets, label_smoothing, pad_id=0):
  """Sum of per-token losses and the number of real tokens.

  Args:
    logits: float32 [batch, length, vocab].
    targets: int [batch, length]; ``pad_id`` positions do not count.
    label_smoothing: epsilon_ls.
  Returns:
    (loss_sum, token_count), float32 scalars. Divide the global sums (over
    replicas and accumulated micro-batches) to get the mean per token.
  """
  logits = ops.cast(logits, "float32")
  log_probs = ops.log_softmax(logits, axis=-1)
  true_log_prob = ops.take_along_axis(
      log_probs, ops.expand_dims(ops.cast(targets, "int32"), -1), axis=-1)[..., 0]
  uniform = ops.mean(log_probs, axis=-1)
  per_token = -((1.0 - label_smoothing) * true_log_prob
                + label_smoothing * uniform)
  weights = ops.cast(ops.not_equal(targets, pad_id), "float32")
  return ops.sum(per_token * weights), ops.sum(weights)
