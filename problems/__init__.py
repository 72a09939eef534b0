"""Registered problems, installed as ``t2t_keras.problems``. Loaded by
t2t_keras.registry on first lookup."""

# pylint: disable=g-import-not-at-top
from t2t_keras.problems import copy_task
from t2t_keras.problems import parsing
from t2t_keras.problems import synthetic
from t2t_keras.problems import translate
