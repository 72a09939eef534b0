"""Registered hparams sets, installed as ``t2t_keras.hparams_sets``. Loaded
by t2t_keras.registry on first lookup."""

from t2t_keras.hparams_sets import transformer
from t2t_keras.hparams_sets import transformer_pointer
from t2t_keras.hparams_sets import transformer_relative
from t2t_keras.hparams_sets import transformer_rotary
