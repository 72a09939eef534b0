"""Hparams sets of transformer_relative (tensor2tensor's names)."""

from t2t_keras import registry
from t2t_keras.hparams_sets.transformer import (multi30k_table3_base,
                                                transformer_base,
                                                transformer_tiny)


def _relative(hparams):
  hparams.pos = "none"                          # no absolute positions
  hparams.add_hparam("max_relative_position", 20)   # tensor2tensor's k
  return hparams


@registry.register_hparams
def transformer_relative_base():
  """transformer_base with relative positions (use --model=
  transformer_relative)."""
  return _relative(transformer_base())


@registry.register_hparams
def transformer_relative_tiny():
  """transformer_tiny with relative positions, for tests and CPU runs."""
  return _relative(transformer_tiny())


@registry.register_hparams
def transformer_relative_multi30k():
  """The small Table 3's base with relative positions: its
  relative-position row (recipes/table3_multi30k.py)."""
  return _relative(multi30k_table3_base())
