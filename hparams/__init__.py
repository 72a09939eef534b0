"""Registered hparams sets, installed as ``t2t_keras.hparams_sets``. Loaded
by t2t_keras.registry on first lookup."""

# Imported for their side effect: each module registers its sets.
from t2t_keras.hparams_sets import transformer  # noqa: F401
from t2t_keras.hparams_sets import transformer_relative  # noqa: F401
from t2t_keras.hparams_sets import transformer_rotary  # noqa: F401
from t2t_keras.hparams_sets import transformer_t2t  # noqa: F401
