"""Guided alignment for outputs that copy their source in order: one head
of one encoder-decoder attention layer is trained to look at the source
token the output copies next (``alignment_loss_weight``).

Garg et al. 2019 ("Jointly Learning to Align and Translate with
Transformer Models") supervise one head of the penultimate decoder layer
with external word alignments; Marian's and OpenNMT-tf's
``guided_alignment`` do the same. Here the alignment needs no aligner: in
parsing's linearized trees the leaves copy the source's pieces in order,
so at decoder position t the source position of the next piece to copy is

    p_t = min(#{j < t : targets[j] occurs in the source}, last real source position)

(``pointer_positions``; once every piece is copied, the source's EOS). With A the chosen head's attention weights
[batch, length, source_length] (the softmax, before dropout) and lambda the
weight, the loss added to the objective's is

    lambda * sum_t -log A[t, p_t]       over real target tokens t,

a cross-entropy between the head's distribution and a one-hot one. The
decoder otherwise has to learn its place in the sentence from the
next-token loss alone, and long sentences are where it loses it
(docs/experiments.md). Decoding, scoring and export are unchanged: the head is
an ordinary head that has learned where to look. On the WSJ sample (weight
0.5) the parser led recipes/parsing_wsj.sh's at every evaluation, by much
at first and little at the end, and was level with it at 5,000 steps under
beam 21 (docs/experiments.md): it helps where the hour holds few steps.
"""

from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.layers import attention_record
from t2t_keras.models.transformer import shift_right
from t2t_keras.training.loss import real_tokens


def copied(ids, inputs):
  """ids int [batch, length], inputs int [batch, source_length] -> bool
  [batch, length]: which ids occur in their row of ``inputs`` (PAD and EOS
  never count)."""
  found = ops.any(ops.equal(ids[:, :, None], inputs[:, None, :]), axis=-1)
  return ops.logical_and(found, ids > max(PAD_ID, EOS_ID))


def last_position(inputs):
  """inputs int [batch, source_length] -> int [batch]: the index of each
  row's last real (non-padding) token, 0 for an empty row."""
  real = ops.sum(ops.cast(ops.not_equal(inputs, PAD_ID), "int32"), axis=1)
  return ops.maximum(real - 1, 0)


def pointer_positions(previous, inputs):
  """previous int [batch, length] (the decoder inputs, shifted targets) and
  inputs int [batch, source_length] -> int [batch, length]: p_t, the source
  position of the next token to copy at each decoder position."""
  count = ops.cumsum(ops.cast(copied(previous, inputs), "int32"), axis=1)
  return ops.minimum(count, last_position(inputs)[:, None])


def alignment_nll(weights, positions, mask):
  """Sum of -log weights[b, t, positions[b, t]] over mask.

  Args:
    weights: float [batch, length, source_length], one head's attention.
    positions: int [batch, length], the source position each row should
      attend to.
    mask: float32 [batch, length], 1 at real target tokens.
  Returns:
    a float32 scalar.
  """
  picked = ops.take_along_axis(ops.cast(weights, "float32"),
                               positions[..., None], axis=-1)[..., 0]
  return ops.sum(-ops.log(ops.maximum(picked, 1e-9)) * mask)


class GuidedAlignment:
  """Another objective plus lambda times the alignment loss (module
  docstring). ``score`` (dev loss and accuracy) is the other objective's.

  Args:
    objective: the objective whose loss the term is added to (``Softmax``).
    weight: lambda, > 0.
    layer: which decoder layer's encoder-decoder attention (Python index
      into the model's ``attention_layers()["encoder_decoder"]``; -2 is the
      penultimate, Garg et al.'s choice).
    head: which of its heads.
  """

  def __init__(self, objective, weight, layer=-2, head=0):
    if weight <= 0:
      raise UserError(f"alignment_loss_weight must be > 0, got {weight}")
    self.objective = objective
    self.weight = float(weight)
    self.layer = int(layer)
    self.head = int(head)

  def check(self, layers, heads):
    """Refuses a ``layer`` or ``head`` that a decoder of ``layers`` layers
    of ``heads`` heads does not have (UserError)."""
    if not -layers <= self.layer < layers:
      raise UserError(f"alignment_layer={self.layer} names no decoder layer "
                      f"of {layers} (expected {-layers} to {layers - 1})")
    if not 0 <= self.head < heads:
      raise UserError(f"alignment_head={self.head} is not one of the {heads} "
                      f"heads (expected 0 to {heads - 1})")

  def loss(self, model, features, label_smoothing):
    try:
      layers = model.attention_layers()["encoder_decoder"]
    except KeyError:
      raise UserError(f"model {type(model).__name__} has no encoder-decoder "
                      "attention for alignment_loss_weight") from None
    # Every decoder layer has the same heads (none: the layer is refused).
    self.check(len(layers), layers[0].num_heads if layers else 0)
    layer = layers[self.layer]
    with attention_record.recording() as recorded:
      loss_sum, tokens = self.objective.loss(model, features,
                                             label_smoothing)
    weights = recorded[layer][:, self.head]
    inputs = ops.cast(features["inputs"], "int32")
    targets = ops.cast(features["targets"], "int32")
    positions = pointer_positions(shift_right(targets), inputs)
    aligned = alignment_nll(weights, positions, real_tokens(targets))
    return loss_sum + self.weight * aligned, tokens

  def score(self, model, features):
    return self.objective.score(model, features)
