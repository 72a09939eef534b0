"""The hparams set of runs imported from tensor2tensor (``t2t-import``,
``--model=transformer_t2t``): the paper's base model with tensor2tensor's
defaults where they differ. t2t-import overrides every size and setting
with the tensor2tensor run's own."""

from t2t_keras import registry
from t2t_keras.hparams_sets.transformer import (transformer_base,
                                                transformer_tiny)


@registry.register_hparams
def transformer_t2t():
  """tensor2tensor's ``transformer_base`` (v3, pre-norm) as t2t_keras
  hparams."""
  return _tensor2tensor(transformer_base())


@registry.register_hparams
def transformer_t2t_tiny():
  """transformer_tiny's sizes with tensor2tensor's settings, for tests."""
  hparams = _tensor2tensor(transformer_tiny())
  hparams.target_space_id = 3       # a row other than 0, to be seen
  return hparams


def _tensor2tensor(hparams):
  hparams.norm_position = "pre"             # preprocess "n", postprocess "da"
  hparams.learning_rate = 2.0               # learning_rate_constant
  hparams.optimizer_adam_beta2 = 0.997
  hparams.optimizer_adam_epsilon = 1e-9
  hparams.learning_rate_warmup_steps = 8000
  hparams.add_hparam("target_space_id", 0)  # its problems' default
  hparams.add_hparam("max_relative_position", 0)  # > 0: relative attention
  return hparams
