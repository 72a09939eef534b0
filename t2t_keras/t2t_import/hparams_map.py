"""A tensor2tensor run's hparams.json -> the hparams of ``transformer_t2t``.

What changes what the model computes is mapped exactly or refused in one
line naming the setting; what only shapes training (the schedule, Adam's
betas, dropouts, batch size) carries over where t2t_keras has the same
thing, and each setting that does not is named in a note.
"""

from t2t_keras import registry
from t2t_keras.errors import UserError

# Settings the import reproduces only at these values: {name: (allowed
# values, what the value means)}.
_REQUIRED = {
    "norm_type": (("layer",), "layer normalization"),
    "self_attention_type": (("dot_product", "dot_product_relative"),
                            "dot-product self-attention, plain or relative"),
    "ffn_layer": (("dense_relu_dense",), "the paper's feed-forward network"),
    "pos": (("timing", "none", None), "timing-signal or no positions"),
    "multiply_embedding_mode": (("sqrt_depth",),
                                "embeddings times sqrt(hidden_size)"),
    "proximity_bias": ((False,), "no proximity bias"),
    "attention_variables_3d": ((False,), "2-D attention kernels"),
    "unidirectional_encoder": ((False,), "a bidirectional encoder"),
    "add_relative_to_values": ((False,), "no relative positions"),
    "weight_dtype": (("float32",), "float32 weights"),
    "bottom": (({},), "the default modalities"),
    "top": (({},), "the default modalities"),
}
_SEQUENCES = {("n", "da"): "pre", ("none", "dan"): "post"}
_CARRIED = {   # tensor2tensor name -> t2t_keras name, same meaning
    "hidden_size": "hidden_size", "filter_size": "filter_size",
    "num_heads": "num_heads", "num_hidden_layers": "num_hidden_layers",
    "num_encoder_layers": "num_encoder_layers",
    "num_decoder_layers": "num_decoder_layers",
    "layer_prepostprocess_dropout": "layer_prepostprocess_dropout",
    "attention_dropout": "attention_dropout", "relu_dropout": "relu_dropout",
    "label_smoothing": "label_smoothing",
    "optimizer_adam_beta1": "optimizer_adam_beta1",
    "optimizer_adam_beta2": "optimizer_adam_beta2",
    "optimizer_adam_epsilon": "optimizer_adam_epsilon",
    "learning_rate_warmup_steps": "learning_rate_warmup_steps",
    "batch_size": "batch_size", "max_length": "max_length",
}
_PAPER_SCHEDULE = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"


def _refuse(name, value, expected):
  raise UserError(f"the tensor2tensor run's {name}={value!r} cannot be "
                  f"imported: t2t-import reproduces {expected} only")


def check_supported(t2t):
  """A ``UserError`` naming the first setting of ``t2t`` (a tensor2tensor
  hparams dict) that the import does not reproduce."""
  for name, (allowed, meaning) in _REQUIRED.items():
    if name in t2t and t2t[name] not in allowed:
      _refuse(name, t2t[name], meaning)
  sequences = (t2t.get("layer_preprocess_sequence", "n"),
               t2t.get("layer_postprocess_sequence", "da"))
  if sequences not in _SEQUENCES:
    raise UserError(
        "the tensor2tensor run's layer_preprocess_sequence="
        f"{sequences[0]!r}, layer_postprocess_sequence={sequences[1]!r} "
        "cannot be imported: t2t-import reproduces 'n'/'da' (pre-norm) and "
        "'none'/'dan' (post-norm) only")
  relative = t2t.get("self_attention_type") == "dot_product_relative"
  if relative and not t2t.get("max_relative_position"):
    _refuse("max_relative_position", t2t.get("max_relative_position"),
            "relative attention with max_relative_position > 0")
  heads = t2t["num_heads"]
  for name in ("attention_key_channels", "attention_value_channels"):
    if t2t.get(name) and t2t[name] % heads:
      _refuse(name, t2t[name], f"channels divisible by num_heads={heads}")


def learning_rate(t2t, notes):
  """The multiplier on the paper's schedule that gives tensor2tensor's."""
  schedule = t2t.get("learning_rate_schedule", _PAPER_SCHEDULE)
  if schedule == _PAPER_SCHEDULE:
    return float(t2t.get("learning_rate_constant", 1.0))
  if schedule == "legacy" and t2t.get("learning_rate_decay_scheme") == \
      "noam":
    # 5000 x Adam's correction 0.002 x learning_rate, on (step + 1).
    return 10.0 * float(t2t.get("learning_rate", 0.1))
  notes.append(f"its learning_rate_schedule={schedule!r} has no equivalent "
               "here: continued training follows the paper's schedule "
               "(set --hparams=learning_rate=... to scale it)")
  return 1.0


def map_hparams(t2t, target_space_id, notes):
  """(t2t_keras HParams of ``transformer_t2t``, t2t_keras model settings)
  from ``t2t``, tensor2tensor's hparams dict. ``notes``: a list to which
  lines on what is not carried over are added."""
  check_supported(t2t)
  hparams = registry.hparams("transformer_t2t")
  for theirs, ours in _CARRIED.items():
    if theirs in t2t and t2t[theirs] is not None:
      hparams.set_hparam(ours, t2t[theirs])
  if not t2t.get("max_length") and t2t.get("batch_size"):
    # tensor2tensor's max_length 0: "use batch_size" (its examples may be
    # as long as a whole batch of tokens).
    hparams.max_length = int(t2t["batch_size"])
  heads = t2t["num_heads"]
  if t2t.get("attention_key_channels"):
    hparams.attention_key_size = t2t["attention_key_channels"] // heads
  if t2t.get("attention_value_channels"):
    hparams.attention_value_size = t2t["attention_value_channels"] // heads
  sequences = (t2t.get("layer_preprocess_sequence", "n"),
               t2t.get("layer_postprocess_sequence", "da"))
  hparams.norm_position = _SEQUENCES[sequences]
  hparams.pos = t2t.get("pos", "timing") or "none"   # relative: None
  if t2t.get("self_attention_type") == "dot_product_relative":
    hparams.max_relative_position = int(t2t["max_relative_position"])
  softmax = bool(t2t.get("shared_embedding_and_softmax_weights", False))
  hparams.shared_embedding_and_softmax_weights = softmax
  hparams.shared_embedding = softmax or bool(t2t.get("shared_embedding"))
  hparams.target_space_id = (target_space_id if t2t.get(
      "use_target_space_embedding", True) else -1)
  hparams.learning_rate = learning_rate(t2t, notes)
  if t2t.get("optimizer", "adam") not in ("adam", "Adam", "lazy_adam",
                                          "LazyAdam"):
    notes.append(f"its optimizer={t2t['optimizer']!r} is not carried "
                 "over: continued training uses Adam")
  # float32 computes what tensor2tensor computed (its default).
  hparams.activation_dtype = "float32"
  if t2t.get("activation_dtype", "float32") != "float32":
    notes.append(f"it computed in {t2t['activation_dtype']}; the import "
                 "computes in float32 (--hparams=activation_dtype=... to "
                 "change)")
  return hparams
