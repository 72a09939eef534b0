"""The length buckets that training batches are grouped by (section 5.1:
"sentence pairs were batched together by approximate sequence length"),
with no TensorFlow in them, so that a JAX-only benchmark batches as the
tf.data pipeline (``t2t_keras.data.pipeline``) does."""


def bucket_boundaries(max_length, min_length=8, growth=1.1):
  """Upper bounds of the length buckets: 8, 9, 10, ... growing by ~10%,
  up to and including ``max_length``."""
  bounds, x = [], min_length
  while x < max_length:
    bounds.append(x)
    x = max(x + 1, int(x * growth))
  return bounds + [max_length]
