"""CTranslate2 export (``t2t-exporter --format=ctranslate2``): a trained
Transformer's weights, vocabularies and SentencePiece models as a CTranslate2
model directory, which ``t2t-decoder --ct2_model_dir`` (``decoding.backends.ct2``)
decodes through.

The paper's model maps exactly: post-norm (or pre-norm) layers with
LayerNorm epsilon 1e-6, fused query/key/value projections with their
biases, embeddings scaled by sqrt(d_model), one matrix for the source and
target embeddings and the pre-softmax projection, and the interleaved
sinusoids of section 3.5 written out as a position table (CTranslate2's own
sinusoids put all sines before all cosines). The decoder starts from id 0,
the padding piece, as ``models.transformer.shift_right`` does. What
CTranslate2 cannot express is refused with one line.
"""

import json
import os

import numpy as np

from t2t_keras.data.vocab import UNK_ID
from t2t_keras.decoding.backends import ct2
from t2t_keras.errors import UserError
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.io import files
from t2t_keras.io.staging import StagedFolder
from t2t_keras.layers.positional_encoding import sinusoid
from t2t_keras.layers.residual import LAYER_NORM_EPSILON
from t2t_keras.layers.tensor2tensor import T2TTimingSignal, timing_signal
from t2t_keras.models.transformer import Transformer
from t2t_keras.models.transformer_t2t import TransformerT2T

# Rows of the sinusoid table: CTranslate2 needs a fixed one; outputs longer
# than this many positions (input + extra_length) cannot be decoded.
MIN_POSITIONS = 1024


def refusal(model, hparams):
  """Why CTranslate2 cannot run ``model`` (a one-line str), or None."""
  if type(model) not in (Transformer, TransformerT2T):
    return (f"the CTranslate2 export maps the paper's transformer model, not "
            f"{type(model).__name__} (its attention or layers differ)")
  c = model.config
  if getattr(c, "max_relative_position", 0):
    return ("the CTranslate2 export maps absolute positions, and this "
            "imported run has tensor2tensor's relative attention")
  if c.key_size != c.value_size:
    return (f"CTranslate2 needs d_k = d_v per head, and this model has d_k "
            f"{c.key_size}, d_v {c.value_size}")
  if c.pos == "none":
    return "CTranslate2 needs absolute positions, and this model has pos=none"
  if c.pos == "emb" and (hparams.max_input_length + hparams.extra_length >
                         c.max_positions):
    return (f"the learned position table has {c.max_positions} rows, fewer "
            f"than max_input_length + extra_length = "
            f"{hparams.max_input_length + hparams.extra_length}")
  return None


def _linear(spec, dense, transpose=True):
  kernel = np.asarray(dense.kernel.numpy(), np.float32)
  spec.weight = kernel.T if transpose else kernel
  spec.bias = np.asarray(dense.bias.numpy(), np.float32)


def _fused(spec, denses):
  """One LinearSpec from several Dense layers stacked on the output axis."""
  spec.weight = np.concatenate([np.asarray(d.kernel.numpy(), np.float32).T
                                for d in denses])
  spec.bias = np.concatenate([np.asarray(d.bias.numpy(), np.float32)
                              for d in denses])


def _norm(spec, layer_norm):
  spec.gamma = np.asarray(layer_norm.gamma.numpy(), np.float32)
  spec.beta = np.asarray(layer_norm.beta.numpy(), np.float32)


def _attention(spec, attention, layer_norm, self_attention):
  maps = attention.projections()
  q, k, v = maps["query"], maps["key"], maps["value"]
  if self_attention:
    _fused(spec.linear[0], [q, k, v])
  else:
    _fused(spec.linear[0], [q])
    _fused(spec.linear[1], [k, v])
  _linear(spec.linear[-1], maps["output"])
  _norm(spec.layer_norm, layer_norm)


def _ffn(spec, feed_forward, layer_norm):
  inner, outer = feed_forward.linear_maps()
  _linear(spec.linear_0, inner)
  _linear(spec.linear_1, outer)
  _norm(spec.layer_norm, layer_norm)


def _positions(stack, depth, rows):
  if stack.positions.__class__.__name__ == "LearnedPositionalEmbedding":
    return np.asarray(stack.positions.table.numpy(), np.float32)
  if isinstance(stack.positions, T2TTimingSignal):
    return np.asarray(timing_signal(np.arange(rows), depth), np.float32)
  return np.asarray(sinusoid(np.arange(rows), depth), np.float32)


def _stack(spec, stack, depth, rows, decoder, added=None):
  """``added``: a [d_model] vector every position's encoding carries (an
  imported run's target-space row, added to every embedded input)."""
  spec.scale_embeddings = True
  encodings = _positions(stack, depth, rows)
  spec.position_encodings.encodings = (encodings if added is None else
                                       encodings + added[None])
  for layer_spec, block in zip(spec.layer, stack.blocks):
    _attention(layer_spec.self_attention, block.self_attention,
               block.layer_norm_0, True)
    if decoder:
      _attention(layer_spec.attention, block.cross_attention,
                 block.layer_norm_1, False)
    _ffn(layer_spec.ffn, block.feed_forward,
         block.layer_norm_2 if decoder else block.layer_norm_1)
  if stack.final_norm is not None:
    _norm(spec.layer_norm, stack.final_norm)


def model_spec(model, source_pieces, target_pieces, hparams):
  """A ``ctranslate2.specs.TransformerSpec`` holding ``model``'s weights.

  Args:
    model: a built ``Transformer`` that ``refusal`` accepts.
    source_pieces, target_pieces: the vocabularies' pieces (str), by id.
    hparams: decode hparams (max_input_length + extra_length sizes the
      sinusoid table).
  """
  from ctranslate2.specs import transformer_spec
  c = model.config
  head_dim = c.key_size if c.key_size * c.num_heads != c.hidden_size else None
  encoder = transformer_spec.TransformerEncoderSpec(
      c.num_encoder_layers, c.num_heads, pre_norm=c.norm_position == "pre",
      head_dim=head_dim)
  decoder = transformer_spec.TransformerDecoderSpec(
      c.num_decoder_layers, c.num_heads, pre_norm=c.norm_position == "pre",
      head_dim=head_dim)
  spec = transformer_spec.TransformerSpec(encoder, decoder)
  rows = max(MIN_POSITIONS, hparams.max_input_length + hparams.extra_length)
  encoder.embeddings[0].weight = np.asarray(
      model.input_embedding.embeddings.numpy(), np.float32)
  decoder.embeddings.weight = np.asarray(
      model.target_embedding.embeddings.numpy(), np.float32)
  decoder.projection.weight = np.asarray(
      model.softmax_weights.embeddings.numpy(), np.float32)
  space = None
  if isinstance(model, TransformerT2T):
    # tensor2tensor's start is the zero vector (its embedding of id 0).
    decoder.embeddings.weight = decoder.embeddings.weight.copy()
    decoder.embeddings.weight[PAD_ID] = 0.0
    if c.target_space_id >= 0:
      space = np.asarray(model.target_space_embedding.numpy(),
                         np.float32)[c.target_space_id]
  _stack(encoder, model.encoder, c.hidden_size, rows, decoder=False,
         added=space)
  _stack(decoder, model.decoder, c.hidden_size, rows, decoder=True)
  spec.config.layer_norm_epsilon = LAYER_NORM_EPSILON
  # Ids 0 (padding, the decoder's start) and 1 (EOS) by their pieces; the
  # source's EOS is added by the decoder, after any cut.
  spec.config.decoder_start_token = target_pieces[PAD_ID]
  spec.config.bos_token = target_pieces[PAD_ID]
  spec.config.eos_token = target_pieces[EOS_ID]
  spec.config.unk_token = target_pieces[UNK_ID]
  spec.register_source_vocabulary(list(source_pieces))
  spec.register_target_vocabulary(list(target_pieces))
  return spec


def save_model(model, source_pieces, target_pieces, hparams, folder):
  """``model_spec``, validated and written to ``folder`` (float32)."""
  spec = model_spec(model, source_pieces, target_pieces, hparams)
  spec.validate()
  spec.optimize(quantization=None)
  spec.save(folder)


def export_ctranslate2(model, vocabs, hparams, target):
  """Writes ``model`` with its (source, target) ``vocabs`` (their
  SentencePiece models too) to the directory ``target`` as a float32
  CTranslate2 model; ``hparams`` (decode hparams) become the decoder's
  defaults. Returns ``target``."""
  reason = refusal(model, hparams)
  if reason:
    raise UserError(f"cannot export to CTranslate2: {reason}")
  try:
    import ctranslate2  # noqa: F401 (only whether it imports)
  except ImportError:
    raise UserError("--format=ctranslate2 needs the ctranslate2 package: "
                    "pip install -e \".[ct2]\"") from None
  pieces = [v.pieces(range(v.size)) for v in vocabs]
  # Written beside the target, then moved in: never half an export.
  staged = StagedFolder(target.rstrip(os.sep))
  partial = staged.stage
  try:
    staged.begin()
    save_model(model, pieces[0], pieces[1], hparams, partial)
    for vocab, name in zip(vocabs, ct2.vocab_files(vocabs)):
      vocab.save(os.path.join(partial, name))
    files.write_text(os.path.join(partial, ct2.SETTINGS_FILE), json.dumps(
        {"decode_hparams": hparams.values()}, indent=1))
  except OSError as e:
    staged.abort()
    raise UserError(f"could not write the CTranslate2 model {partial} "
                    f"({e.strerror or e}); nothing was exported") from None
  except BaseException:
    staged.abort()
    raise
  return staged.commit(replace=True)
