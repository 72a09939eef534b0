"""The label-smoothed cross-entropy of training/loss.py as two XLA kernels,
for TensorFlow.

Without XLA, TensorFlow runs each elementwise op and reduction of the loss
as its own pass over the [tokens, V] logits (7 forward, 4 back, plus casts
in mixed precision). Compiled, the forward is one fused pass that reads the
logits in their own dtype and keeps only the per-token log-normalizer, and
the backward one pass that recomputes the probabilities and writes the
gradient in the logits' dtype (the true tokens' entries selected by an index
compare, never a one-hot tensor in memory). At 4,096 tokens x 32,000 on a
2-core CPU: 145 -> 86 ms (float32 logits) and 180 -> 120 ms (bfloat16)
forward + backward. XLA compiles each new [tokens, V] shape once (a fraction
of a second for these two small kernels); the training step's own graph is
traced once as before.
"""

import tensorflow as tf


@tf.function(jit_compile=True, autograph=False)
def _forward(logits, targets, label_smoothing):
  """logits [N, V] (any float dtype), targets [N] int32 -> (loss [N],
  log-normalizer [N]), float32."""
  z = tf.cast(logits, tf.float32)
  largest = tf.reduce_max(z, -1, keepdims=True)
  log_normalizer = (tf.math.log(tf.reduce_sum(tf.exp(z - largest), -1))
                    + largest[:, 0])
  true_logit = tf.gather(z, targets[:, None], batch_dims=1)[:, 0]
  value = (log_normalizer - (1.0 - label_smoothing) * true_logit
           - label_smoothing * tf.reduce_mean(z, -1))
  return value, log_normalizer


@tf.function(jit_compile=True, autograph=False)
def _backward(logits, targets, log_normalizer, upstream, label_smoothing):
  """d loss / d logits [N, V] in the logits' dtype, for ``upstream`` [N]:
  upstream * (softmax - (1 - eps) onehot(targets) - eps / V)."""
  z = tf.cast(logits, tf.float32)
  vocab = tf.shape(z)[-1]
  probs = tf.exp(z - log_normalizer[:, None])
  is_true = tf.range(vocab)[None, :] == targets[:, None]
  smooth = label_smoothing / tf.cast(vocab, tf.float32)
  grad = probs - smooth - tf.where(is_true, 1.0 - label_smoothing, 0.0)
  return tf.cast(upstream[:, None] * grad, logits.dtype)


def per_token_loss(logits, targets, label_smoothing):
  """Logits [..., V] (float32 or bfloat16), int targets [...] -> float32
  loss [...]; the same values and gradient as training/loss.py's formula."""
  shape = tf.shape(targets)
  vocab = tf.shape(logits)[-1]
  flat_targets = tf.reshape(tf.cast(targets, tf.int32), [-1])
  smoothing = tf.constant(label_smoothing, tf.float32)

  @tf.custom_gradient
  def loss(flat_logits):
    value, log_normalizer = _forward(flat_logits, flat_targets, smoothing)

    def grad(upstream):
      return _backward(flat_logits, flat_targets, log_normalizer, upstream,
                       smoothing)

    return value, grad

  return tf.reshape(loss(tf.reshape(logits, [-1, vocab])), shape)
