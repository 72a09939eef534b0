"""t2t_keras: the Transformer of "Attention Is All You Need" for Keras 3."""

__version__ = "0.1.0"

from t2t_keras.hparams import HParams

__all__ = ["HParams", "build_model"]


def build_model(*args, **kwargs):
  """See ``t2t_keras.models.builder.build_model``."""
  from t2t_keras.models.builder import build_model as _build
  return _build(*args, **kwargs)
