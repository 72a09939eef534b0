"""Attention masks as additive biases (section 3.2.3 of the paper).

A bias is 0 where attention is allowed and a large negative number where it is
not; it is added to the attention logits (in float32) before the softmax, so
that masked keys get probability ~0 ("setting to -inf").
"""

from keras import ops

# Large enough that exp(logit + NEG_INF - max) underflows to 0 in float32,
# small enough that sums of two biases stay finite.
NEG_INF = -1e9


def padding_bias(ids, pad_id=0):
  """Bias that hides padding keys.

  Args:
    ids: int tensor [batch, length]; ``pad_id`` marks padding.
  Returns:
    float32 tensor [batch, 1, 1, length]: NEG_INF at padding, else 0.
  """
  is_pad = ops.cast(ops.equal(ids, pad_id), "float32")
  return ops.expand_dims(ops.expand_dims(is_pad * NEG_INF, 1), 1)


def causal_bias(length):
  """Bias that hides future positions (decoder self-attention).

  Returns:
    float32 tensor [1, 1, length, length]: entry [i, j] is NEG_INF if j > i.
  """
  positions = ops.arange(length)
  future = ops.greater(positions[None, :], positions[:, None])
  return ops.cast(future, "float32")[None, None] * NEG_INF
