"""A tensor2tensor ``transformer`` checkpoint's variables -> a built
``models.transformer_t2t`` model's.

tensor2tensor's names (``transformer/body/...``):
  encoder/layer_N/self_attention/multihead_attention/{q,k,v,
      output_transform}/kernel                    (no biases)
  encoder/layer_N/{self_attention,ffn}/layer_prepostprocess/layer_norm/
      layer_norm_{scale,bias}       (pre-norm; post-norm: layer_postprocess)
  encoder/layer_N/ffn/conv{1,2}/{kernel,bias}
  encoder/layer_prepostprocess/layer_norm/...     (pre-norm's final norm)
  decoder/...: the same, with encdec_attention between self_attention
      and ffn
  target_space_embedding/kernel                  [32, d]
  .../multihead_attention/dot_product_attention_relative/
      relative_positions_{keys,values}/embeddings [2k + 1, d / h]
and ``transformer/symbol_modality_<V>_<d>/<scope>/weights_<i>``: an
embedding cut into row shards, ``scope`` "shared" (one matrix for inputs,
targets and softmax, or inputs and targets), "input_emb", "target_emb",
"softmax". The attention biases of the t2t_keras layers are set to zero.
"""

import re

import numpy as np

from t2t_keras.errors import UserError
from t2t_keras.kernels.keras_internals import adam_moments

_SHARD = re.compile(r"^transformer/symbol_modality_(\d+)_(\d+)/(\w+)/"
                    r"weights_(\d+)$")
_ATTENTION = {"q": "query", "k": "key", "v": "value",
              "output_transform": "output"}
_FFN = {"conv1": 0, "conv2": 1}
_RELATIVE = {"relative_positions_keys": "relative_keys",
             "relative_positions_values": "relative_values"}
_NORM = {"layer_norm_scale": "gamma", "layer_norm_bias": "beta"}


def model_variables(names):
  """The names of a checkpoint's model variables (not the optimizer's
  slots, step or loss averages)."""
  return sorted(n for n in names if n.startswith("transformer/") and
                "Adam" not in n and "/Momentum" not in n and
                not n.startswith("transformer/training"))


def embeddings(reader, names):
  """{scope: [vocab, d] array} of the symbol modalities' sharded
  matrices."""
  shards = {}
  for name in names:
    match = _SHARD.match(name)
    if match:
      scope = match.group(3)
      shards.setdefault(scope, []).append((int(match.group(4)), name))
  return {scope: np.concatenate([reader.get_tensor(n) for _, n in
                                 sorted(parts)], axis=0)
          for scope, parts in shards.items()}


def _sublayers(block, decoder):
  """{tensor2tensor sublayer name: (t2t_keras attention or None, norm
  index)} of one encoder or decoder layer."""
  found = {"self_attention": (block.self_attention, 0)}
  if decoder:
    found["encdec_attention"] = (block.cross_attention, 1)
  found["ffn"] = (None, 2 if decoder else 1)
  return found


def targets(model):
  """{tensor2tensor variable name: t2t_keras variable} for every model
  variable tensorflow2tensor's transformer holds, embeddings excepted."""
  body = "transformer/body/"
  # tensor2tensor names the norm after where it is: around the sub-layer
  # (pre-norm, "layer_prepostprocess") or after it (post-norm).
  around = ("layer_prepostprocess" if model.config.norm_position == "pre"
            else "layer_postprocess")
  found = {}
  if model.config.target_space_id >= 0:
    found[body + "target_space_embedding/kernel"] = \
        model.target_space_embedding
  for stack_name, stack in (("encoder", model.encoder),
                            ("decoder", model.decoder)):
    for i, block in enumerate(stack.blocks):
      prefix = f"{body}{stack_name}/layer_{i}/"
      for sub, (attention, norm) in _sublayers(
          block, stack_name == "decoder").items():
        layer_norm = getattr(block, f"layer_norm_{norm}")
        for theirs, ours in _NORM.items():
          found[f"{prefix}{sub}/{around}/layer_norm/{theirs}"] = getattr(
              layer_norm, ours)
        if attention is not None:
          maps = attention.projections()
          for theirs, ours in _ATTENTION.items():
            found[f"{prefix}{sub}/multihead_attention/{theirs}/kernel"] = \
                maps[ours].kernel
          if hasattr(attention, "relative_keys"):
            for theirs, ours in _RELATIVE.items():
              found[f"{prefix}{sub}/multihead_attention/"
                    f"dot_product_attention_relative/{theirs}/embeddings"] = \
                  getattr(attention, ours)
        else:
          for theirs, ours in _FFN.items():
            dense = block.feed_forward.linear_maps()[ours]
            found[f"{prefix}ffn/{theirs}/kernel"] = dense.kernel
            found[f"{prefix}ffn/{theirs}/bias"] = dense.bias
    if stack.final_norm is not None:
      for theirs, ours in _NORM.items():
        found[f"{body}{stack_name}/layer_prepostprocess/layer_norm/"
              f"{theirs}"] = getattr(stack.final_norm, ours)
  return found


def _embedding_targets(model, scopes):
  """{scope: [t2t_keras TokenEmbedding, ...]} for the scopes present."""
  if "shared" in scopes and "softmax" not in scopes:
    return {"shared": [model.target_embedding]}
  if "shared" in scopes:
    return {"shared": [model.target_embedding], "softmax":
            [model.softmax_weights]}
  return {"input_emb": [model.input_embedding],
          "target_emb": [model.target_embedding],
          "softmax": [model.softmax_weights]}


def _slot(reader, name, which):
  """Adam's first (``which`` 0) or second moment of variable ``name``:
  TensorFlow 2's LazyAdam slot, or TensorFlow 1's Adam / Adam_1; None
  if the checkpoint has neither."""
  for slot in (f"training/LazyAdam/{name}/{'mv'[which]}",
               f"{name}/{('Adam', 'Adam_1')[which]}"):
    if reader.has_tensor(slot):
      return reader.get_tensor(slot)
  return None


def _embedding_slot(reader, names, scope, which):
  shards = sorted((int(m.group(4)), n) for n in names
                  if (m := _SHARD.match(n)) and m.group(3) == scope)
  parts = [_slot(reader, n, which) for _, n in shards]
  return None if any(p is None for p in parts) else np.concatenate(parts)


def assign_moments(optimizer, model, reader, names):
  """Sets Adam's moments (``optimizer``: built on ``model``'s trainable
  variables) from the checkpoint's, for every variable that has them;
  returns how many variables got them (0: a checkpoint without them)."""
  names = model_variables(names)
  by_variable = {id(v): n for n, v in targets(model).items()}
  scopes = _embedding_targets(model, set(embeddings(reader, names)))
  for scope, layers in scopes.items():
    for layer in layers:
      by_variable[id(layer.embeddings)] = scope
  done = 0
  for variable, first, second in adam_moments(optimizer):
    name = by_variable.get(id(variable))
    if name is None:
      continue
    moments = [(_embedding_slot(reader, names, name, which) if "/" not in
                name else _slot(reader, name, which)) for which in (0, 1)]
    if any(m is None or m.shape != tuple(variable.shape) for m in moments):
      continue
    first.assign(moments[0])
    second.assign(moments[1])
    done += 1
  return done


def assign(model, reader, names):
  """Sets every variable of ``model`` from the checkpoint ``reader``
  (``tf.train.load_checkpoint``) whose variable names are ``names``; a
  ``UserError`` names a variable that is missing, left over or of
  another shape. The attention layers' biases become zeros."""
  names = model_variables(names)
  mapped = targets(model)
  matrices = embeddings(reader, names)
  wanted = _embedding_targets(model, set(matrices))
  missing = [n for n in mapped if n not in names] + [
      f"transformer/symbol_modality_*/{s}/weights_*" for s in wanted
      if s not in matrices]
  if missing:
    raise UserError(f"the checkpoint lacks {missing[0]}, which this "
                    "model needs (is it tensor2tensor's transformer, with "
                    "the hparams of its run?)")
  left = [n for n in names if n not in mapped and not _SHARD.match(n)]
  left += [f"transformer/symbol_modality_*/{s}" for s in matrices
           if s not in wanted]
  if left:
    raise UserError(f"the checkpoint's {left[0]} has no place in the "
                    "imported model: t2t-import maps tensor2tensor's "
                    "transformer only")
  for name, variable in mapped.items():
    _set(variable, reader.get_tensor(name), name)
  for scope, layers in wanted.items():
    for layer in layers:
      _set(layer.embeddings, matrices[scope],
           f"transformer/symbol_modality_*/{scope}")
  for stack in (model.encoder, model.decoder):
    for block in stack.blocks:
      for attention in ([block.self_attention] + (
          [block.cross_attention] if hasattr(block, "cross_attention")
          else [])):
        for dense in attention.projections().values():
          if dense.bias is not None:
            dense.bias.assign(np.zeros(dense.bias.shape, "float32"))


def _set(variable, value, name):
  if tuple(variable.shape) != tuple(value.shape):
    raise UserError(f"the checkpoint's {name} has shape {list(value.shape)}"
                    f", the model's {list(variable.shape)}: the run's "
                    "hparams.json does not describe this checkpoint")
  variable.assign(value.astype("float32"))
