"""Searches that keep one hypothesis a sentence and pick each next token
with a rule: greedy decoding (argmax) here, sampling in ``sampling.py``. A
new such search subclasses ``TokenSearch`` and writes only ``choose``.

Written in ``keras.ops`` and ``tensor_ops``, as beam search is: the same
search as a TensorFlow graph, under XLA and under ``jax.jit``. The
search decodes the model prepared for decoding (``models.prepared``), read
once a batch.
"""

from keras import ops

from t2t_keras import registry
from t2t_keras.decoding.searches.search import Search
from t2t_keras.decoding.searches.steps import (EXTRA_LENGTH, constrained_limits,
                                               output_length,
                                               per_hypothesis_state,
                                               step_log_probs, write_column)
from t2t_keras.decoding.searches.tensor_ops import (argmax, gather_rows,
                                                    search_loop)
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.models.prepared import decoding_model


def token_by_token(model, inputs, choose, extra_length=EXTRA_LENGTH,
                   constraint=None):
  """One hypothesis per sentence, each token picked by ``choose``.

  Args:
    model: a ``Seq2SeqModel`` or a ``PreparedModel``.
    inputs: int [batch, length].
    choose: ``(log_probs [batch, vocab], step) -> int32 [batch]``, the next
      tokens (argmax for greedy decoding; see ``decoding.searches.sampling``).
    extra_length: outputs stop at input length + this.
    constraint: optional ``decoding.searches.constraints.Constraint``.
  Returns (ids [batch, max_length] 0-padded after EOS, the model's log-prob of
  each output [batch]; under a renormalizing constraint, the log-prob among
  the allowed tokens).
  """
  with decoding_model(model, 1) as decoding:
    return _token_by_token(decoding, inputs, choose, extra_length,
                           constraint)


def _token_by_token(model, inputs, choose, extra_length, constraint):
  inputs = ops.convert_to_tensor(inputs, "int32")
  batch = ops.shape(inputs)[0]
  limits, allowed = constrained_limits(inputs, extra_length, 1, constraint)
  max_length = output_length(inputs, extra_length, constraint)
  cache = model.init_cache(per_hypothesis_state(model.encode(inputs), 1),
                           max_length)

  def body(step, previous, done, ids, score, allowed, cache):
    log_probs, cache = step_log_probs(model, previous, step, cache, limits,
                                       constraint, allowed)
    token = ops.cast(choose(log_probs, step), "int32")
    token = ops.where(done, PAD_ID, token)
    gained = gather_rows(log_probs, token)
    score = score + ops.where(done, 0.0, gained)
    ids = write_column(ids, step, token)
    done = ops.logical_or(done, ops.equal(token, EOS_ID))
    if constraint is not None:
      allowed = constraint.advance(allowed, token)
    return step + 1, token, done, ids, score, allowed, cache

  def cond(step, previous, done, *_):
    del previous
    return ops.logical_and(step < max_length,
                           ops.logical_not(ops.all(done)))

  start = (ops.convert_to_tensor(0, "int32"), ops.zeros((batch,), "int32"),
           ops.zeros((batch,), "bool"),
           ops.zeros((batch, max_length), "int32"),
           ops.zeros((batch,), "float32"), allowed or {}, cache)
  _, _, _, ids, score, _, _ = search_loop(cond, body, start)
  return ids, score


def greedy_decode(model, inputs, extra_length=EXTRA_LENGTH, constraint=None):
  """Argmax decoding. inputs: int [batch, length].

  Returns (ids [batch, max_length] 0-padded after EOS, log-prob [batch]).
  """
  return token_by_token(
      model, inputs,
      lambda log_probs, _: argmax(log_probs),
      extra_length, constraint)




class TokenSearch(Search):
  """One output a sentence; subclasses define ``choose``."""

  def choose(self, log_probs, step):
    """The next tokens: log_probs float32 [batch, vocab] (the model's, with
    the constraint's mask) and the step (int32 scalar) -> int32 [batch]."""
    raise NotImplementedError

  def __call__(self, model, inputs, constraint=None):
    ids, scores = token_by_token(model, inputs, self.choose,
                                 self.options.extra_length, constraint)
    return ids[:, None], scores[:, None]


@registry.register_search("greedy")
class Greedy(TokenSearch):
  """The most likely token at every step."""

  def choose(self, log_probs, step):
    del step
    return argmax(log_probs)

  def describe(self):
    return f"greedy, extra length {self.options.extra_length}"
