"""Hparams sets of transformer_pointer (the Transformer's own hparams: the
pointer adds none)."""

from t2t_keras import registry
from t2t_keras.hparams_sets.transformer import transformer_tiny


@registry.register_hparams
def transformer_pointer_tiny():
  """transformer_tiny, for tests of --model=transformer_pointer (any
  Transformer set trains it, e.g. transformer_parsing_small)."""
  return transformer_tiny()
