"""Parameters and FLOPs of a Transformer, counted exactly from its shapes.

Parameters by part, as ``layers`` builds them (every projection and
feed-forward matrix has a bias; each layer normalization a scale and a
bias). FLOPs count multiply-adds as 2 and only the matrix products (the
elementwise work is a few percent at d_model 512): a product of an
[m, k] by a [k, n] matrix is 2 m k n FLOPs. Training is 3x the forward pass
(the backward pass computes two products of the same size per product: the
gradients of both operands). Section 3.2.2's sizes: h heads of d_k (queries,
keys) and d_v (values).

Per token, with source length S and target length T (the attention terms
grow with them):

- forward, per source token: the encoder layers (projections, S-wide
  attention, feed-forward) and each decoder layer's keys and values of the
  memory (encoder-decoder attention).
- forward, per target token: the decoder layers' self-attention (T wide;
  the causal mask hides half of it, but the product is computed whole),
  encoder-decoder queries and attention (S wide), feed-forward, and the
  pre-softmax projection to the vocabulary.
- decoding, per output token of one hypothesis: a decoder step with the
  cache; step t's self-attention spans the t + 1 positions decoded so far
  (the cache grows a position a step), (T + 1) / 2 on average over an
  output of T tokens.
"""

import dataclasses

from t2t_keras.models.transformer import Transformer
from t2t_keras.models.transformer_relative import (RelativeTransformerConfig,
                                                   TransformerRelative)
from t2t_keras.models.transformer_rotary import TransformerRotary

# The models these counts are exact for. Rotary positions add no weights,
# and their elementwise rotation is not counted, as LayerNorm's is not.
COUNTED_MODELS = (Transformer, TransformerRelative, TransformerRotary)


@dataclasses.dataclass(frozen=True)
class Sizes:
  """The shapes that decide the counts."""
  d: int          # d_model
  ff: int         # d_ff
  h: int
  dk: int
  dv: int
  encoder_layers: int
  decoder_layers: int
  input_vocab: int
  target_vocab: int
  relative: int   # rows of relative position vectors per self-attention

  @classmethod
  def of(cls, config, input_vocab_size, target_vocab_size=None):
    relative = (2 * config.max_relative_position + 1 if isinstance(
        config, RelativeTransformerConfig) else 0)
    return cls(config.hidden_size, config.filter_size, config.num_heads,
               config.key_size, config.value_size, config.num_encoder_layers,
               config.num_decoder_layers, int(input_vocab_size),
               int(target_vocab_size or input_vocab_size), relative)


def attention_params(s, relative=False):
  """W^Q, W^K, W^V (with biases), W^O (with bias)."""
  hk, hv = s.h * s.dk, s.h * s.dv
  count = 2 * (s.d * hk + hk) + (s.d * hv + hv) + (hv * s.d + s.d)
  if relative:
    count += s.relative * (s.dk + s.dv)
  return count


def feed_forward_params(s):
  return s.d * s.ff + s.ff + s.ff * s.d + s.d


def parameters(config, input_vocab_size, target_vocab_size=None):
  """{part: count}, parts in model order; their sum is
  ``model.count_params()``."""
  s = Sizes.of(config, input_vocab_size, target_vocab_size)
  norm = 2 * s.d
  relative = s.relative > 0
  parts = {}
  parts["target embedding"] = s.target_vocab * s.d
  if not config.shared_embedding:
    parts["input embedding"] = s.input_vocab * s.d
  if not config.shared_embedding_and_softmax_weights:
    parts["pre-softmax weights"] = s.target_vocab * s.d
  for stack, layers in (("encoder", s.encoder_layers),
                        ("decoder", s.decoder_layers)):
    if config.pos == "emb":
      parts[f"{stack} positions"] = config.max_positions * s.d
    for i in range(layers):
      count = attention_params(s, relative) + feed_forward_params(s) + 2 * norm
      if stack == "decoder":
        count += attention_params(s) + norm
      parts[f"{stack} layer {i + 1}"] = count
    if config.norm_position == "pre":
      parts[f"{stack} final norm"] = norm
  return parts


def forward_flops(config, vocab_sizes, source_length, target_length):
  """(FLOPs per source token, FLOPs per target token) of one forward pass
  over [source_length] and [target_length] sequences."""
  s = Sizes.of(config, *vocab_sizes)
  hk, hv = s.h * s.dk, s.h * s.dv
  rel = 2 if s.relative else 1       # relative terms repeat the products
  projections = 2 * s.d * (2 * hk + hv) + 2 * hv * s.d
  feed_forward = 4 * s.d * s.ff
  per_source = s.encoder_layers * (
      projections + rel * 2 * source_length * (hk + hv) + feed_forward)
  per_source += s.decoder_layers * 2 * s.d * (hk + hv)   # memory keys, values
  per_target = s.decoder_layers * (
      projections + rel * 2 * target_length * (hk + hv)
      + 2 * s.d * hk + 2 * hv * s.d + 2 * source_length * (hk + hv)
      + feed_forward)
  per_target += 2 * s.d * s.target_vocab
  return per_source, per_target


def training_flops(config, vocab_sizes, source_length, target_length):
  """(per source token, per target token): 3x the forward pass."""
  return tuple(3 * f for f in forward_flops(config, vocab_sizes,
                                            source_length, target_length))


def decoding_flops(config, vocab_sizes, source_length, output_length):
  """(per source token, per output token of one hypothesis) of cached
  decoding of ``output_length`` tokens: the source is encoded once; step t
  runs the decoder on one token with self-attention over t + 1 positions,
  (output_length + 1) / 2 on average."""
  per_source, _ = forward_flops(config, vocab_sizes, source_length, 1)
  _, per_step = forward_flops(config, vocab_sizes, source_length,
                              (output_length + 1) / 2)
  return per_source, per_step


def step_flops(config, vocab_sizes, source_length, target_length,
               sentences):
  """Training FLOPs of one step over ``sentences`` pairs of these lengths."""
  per_source, per_target = training_flops(config, vocab_sizes, source_length,
                                          target_length)
  return sentences * (source_length * per_source + target_length * per_target)
