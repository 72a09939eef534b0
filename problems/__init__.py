"""Registered problems. Loaded by t2t_keras.registry on first lookup."""

T2T_KERAS_REGISTRATIONS = True

from problems import copy_task  # pylint: disable=g-import-not-at-top
