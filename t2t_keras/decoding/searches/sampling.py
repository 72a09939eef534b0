"""Sampling instead of search (for back-translation and diverse outputs):
each next token is drawn from the model's distribution, optionally sharpened
by a temperature and cut to the ``top_k`` most likely tokens or to the
smallest set whose probability reaches ``top_p`` (nucleus sampling).

Draws are stateless (``tensor_ops.categorical`` seeded with (seed, step)),
so a seed gives the same outputs for the same batch on one backend, and the
loop uses core ops only on TensorFlow (it exports). With ``top_k=1`` sampling is greedy
decoding. Scores are the model's log-probabilities of the drawn outputs
(untempered, unfiltered).
"""

from keras import ops

from t2t_keras import registry
from t2t_keras.decoding.searches.tensor_ops import categorical, gather_rows
from t2t_keras.decoding.searches.token_by_token import (TokenSearch,
                                                        token_by_token)
from t2t_keras.errors import UserError
from t2t_keras.layers.masks import NEG_INF

METHODS = ("topk", "topp")


def check_sampling(method, top_k, top_p, temperature):
  """A ``UserError`` naming the bad setting, or nothing."""
  if method not in METHODS:
    raise UserError(f"sampling must be one of {', '.join(METHODS)} (or empty "
                    f"for beam search), got {method!r}")
  if temperature <= 0:
    raise UserError(f"temperature must be > 0, got {temperature}")
  if method == "topk" and top_k < 0:
    raise UserError(f"top_k must be >= 0 (0: the whole vocabulary), got "
                    f"{top_k}")
  if method == "topp" and not 0 < top_p <= 1:
    raise UserError(f"top_p must be in (0, 1], got {top_p}")


def filter_logits(log_probs, method, top_k=0, top_p=1.0, temperature=1.0):
  """log_probs [batch, vocab] -> logits to draw from: divided by the
  temperature, then all but the top-k (``topk``, k > 0) or the nucleus of
  mass ``top_p`` (``topp``) set to NEG_INF."""
  logits = log_probs / temperature
  if method == "topk" and top_k > 0:
    # The k-th largest as the min of the k largest, not their last column:
    # XLA on CPUs folds such a slice into the top-k's sort, which then stays
    # a full sort of each row instead of its TopK call.
    kth = ops.min(ops.top_k(logits, top_k)[0], axis=-1, keepdims=True)
    return ops.where(logits < kth, NEG_INF, logits)
  if method == "topp":
    ordered = ops.flip(ops.sort(logits, axis=-1), axis=-1)  # descending
    probs = ops.softmax(ordered, axis=-1)
    before = ops.pad(ops.cumsum(probs, axis=-1)[:, :-1],
                     ((0, 0), (1, 0)))                  # the mass above each
    kept = ops.sum(ops.cast(before < top_p, "int32"), -1)  # >= 1
    smallest = gather_rows(ordered, kept[:, None] - 1)
    return ops.where(logits < smallest, NEG_INF, logits)
  return logits


def draw(log_probs, step, method, top_k, top_p, temperature, seed):
  """int32 [batch]: one token a row of ``log_probs`` [batch, vocab], drawn
  after ``filter_logits``, seeded by (seed, step)."""
  logits = filter_logits(log_probs, method, top_k, top_p, temperature)
  return categorical(logits, seed, step)


def sample_decode(model, inputs, method="topk", top_k=0, top_p=1.0,
                  temperature=1.0, seed=0, extra_length=50, constraint=None):
  """Sampled outputs: (ids [batch, max_length], log-prob [batch]), drawn
  among the tokens an optional ``constraint`` allows."""
  check_sampling(method, top_k, top_p, temperature)
  return token_by_token(
      model, inputs,
      lambda log_probs, step: draw(log_probs, step, method, top_k, top_p,
                                   temperature, seed),
      extra_length, constraint)


@registry.register_search("sample")
class Sampling(TokenSearch):
  """One draw a sentence (``sampling``: topk or topp; default topk)."""

  def __init__(self, options):
    super().__init__(options)
    self.method = options.sampling or "topk"
    check_sampling(self.method, options.top_k, options.top_p,
                   options.temperature)

  def choose(self, log_probs, step):
    o = self.options
    return draw(log_probs, step, self.method, o.top_k, o.top_p, o.temperature,
                o.seed)

  def describe(self):
    o = self.options
    return (f"sampling {self.method}, top_k {o.top_k}, top_p {o.top_p}, "
            f"temperature {o.temperature}, seed {o.seed}")
