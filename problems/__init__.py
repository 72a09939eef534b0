"""Registered problems. Loaded by t2t_keras.registry on first lookup."""

T2T_KERAS_REGISTRATIONS = True

# pylint: disable=g-import-not-at-top
from problems import copy_task
from problems import parsing
from problems import synthetic
from problems import translate
