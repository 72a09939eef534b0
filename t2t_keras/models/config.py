"""The Transformer's architecture, resolved from an hparams set.

Hparams use tensor2tensor's names (``hidden_size``, ``filter_size``,
``layer_prepostprocess_dropout``...); this dataclass holds the resolved
numbers the layers take, with the paper's symbols in comments.
"""

import dataclasses

from t2t_keras.errors import UserError
from t2t_keras.hparams import HParams


# Config fields whose hparams are named otherwise (tensor2tensor's names).
_HPARAM = {"dropout": "layer_prepostprocess_dropout",
           "key_size": "attention_key_size",
           "value_size": "attention_value_size"}


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
  hidden_size: int            # d_model
  filter_size: int            # d_ff
  num_heads: int              # h
  num_encoder_layers: int     # N
  num_decoder_layers: int     # N
  key_size: int               # d_k, per head
  value_size: int             # d_v, per head
  dropout: float              # P_drop: sub-layer outputs, embeddings+positions
  attention_dropout: float
  relu_dropout: float
  norm_position: str          # "post" (the paper) or "pre"
  pos: str                    # "timing" (sinusoids), "emb" (learned), "none"
  max_positions: int          # rows of the learned position table
  shared_embedding: bool      # source and target embeddings are one matrix
  shared_embedding_and_softmax_weights: bool  # target emb = pre-softmax W

  def __post_init__(self):
    """Sizes a model can be built with, each refused in one line naming
    the hparam (``num_heads=0`` would fail deep in a layer)."""
    for name, least in (("hidden_size", 1), ("filter_size", 1),
                        ("num_heads", 1), ("num_encoder_layers", 0),
                        ("num_decoder_layers", 1), ("key_size", 1),
                        ("value_size", 1), ("max_positions", 1)):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or \
          value < least:
        raise UserError(f"{_HPARAM.get(name, name)} must be an integer >= "
                        f"{least}, got {value!r}")
    for name in ("dropout", "attention_dropout", "relu_dropout"):
      value = getattr(self, name)
      if not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise UserError(f"{_HPARAM.get(name, name)} must be in [0, 1), "
                        f"got {value!r}")

  @classmethod
  def from_hparams(cls, hparams):
    """From an HParams, its values() dict, or a dict from ``to_dict``.

    A subclass (a model variant's config) adds fields; each is read from
    the hparams of the same name, or takes the field's default where the
    hparams lack it."""
    values = hparams.values() if isinstance(hparams, HParams) else dict(
        hparams)
    names = [f.name for f in dataclasses.fields(cls)]
    if all(n in values for n in names):
      return cls(**{n: values[n] for n in names})
    # A field with a default may be missing (a run saved before it was
    # added keeps its meaning).
    optional = {f.name for f in dataclasses.fields(cls)
                if f.default is not dataclasses.MISSING}
    try:
      resolved = cls._resolve(values)
      resolved.update({n: values[n] for n in names
                       if n not in resolved and not (
                           n in optional and n not in values)})
    except KeyError as e:
      raise UserError(f"hparams lack {e.args[0]!r}, which the "
                      f"{cls.__name__} model config needs") from None
    return cls(**resolved)

  @staticmethod
  def _resolve(values):
    """The paper's architecture from tensor2tensor's hparams names."""
    heads = values["num_heads"]
    hidden = values["hidden_size"]
    layers = values["num_hidden_layers"]
    for name in ("num_heads", "hidden_size", "num_hidden_layers"):
      if not isinstance(values[name], int) or values[name] < 1:
        raise UserError(f"{name} must be an integer >= 1, got "
                        f"{values[name]!r}")
    if hidden % heads and not (values.get("attention_key_size")
                               and values.get("attention_value_size")):
      raise UserError(
          f"hidden_size={hidden} is not divisible by num_heads={heads}; "
          "set attention_key_size and attention_value_size explicitly")
    return dict(
        hidden_size=hidden,
        filter_size=values["filter_size"],
        num_heads=heads,
        num_encoder_layers=values.get("num_encoder_layers") or layers,
        num_decoder_layers=values.get("num_decoder_layers") or layers,
        key_size=values.get("attention_key_size") or hidden // heads,
        value_size=values.get("attention_value_size") or hidden // heads,
        dropout=values["layer_prepostprocess_dropout"],
        attention_dropout=values["attention_dropout"],
        relu_dropout=values["relu_dropout"],
        norm_position=values["norm_position"],
        pos=values["pos"],
        max_positions=values["max_positions"],
        shared_embedding=values["shared_embedding"],
        shared_embedding_and_softmax_weights=values[
            "shared_embedding_and_softmax_weights"])

  def to_dict(self):
    return dataclasses.asdict(self)
