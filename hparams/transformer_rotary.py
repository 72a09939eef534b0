"""Hparams sets of transformer_rotary."""

from t2t_keras import registry
from t2t_keras.hparams_sets.transformer import transformer_base, transformer_tiny


@registry.register_hparams
def transformer_rotary_base():
  """transformer_base with rotary positions (--model=transformer_rotary)."""
  hparams = transformer_base()
  hparams.pos = "none"
  return hparams


@registry.register_hparams
def transformer_rotary_tiny():
  """transformer_tiny with rotary positions, for tests and CPU runs."""
  hparams = transformer_tiny()
  hparams.pos = "none"
  return hparams
