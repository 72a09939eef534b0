"""Registered hparams sets. Loaded by t2t_keras.registry on first lookup."""

T2T_KERAS_REGISTRATIONS = True

from hparams import transformer  # pylint: disable=g-import-not-at-top
