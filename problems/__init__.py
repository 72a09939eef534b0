"""Registered problems, installed as ``t2t_keras.problems``. Loaded by
t2t_keras.registry on first lookup."""

# Imported for their side effect: each module registers its problems.
from t2t_keras.problems import copy_task  # noqa: F401
from t2t_keras.problems import parsing  # noqa: F401
from t2t_keras.problems import synthetic  # noqa: F401
from t2t_keras.problems import translate  # noqa: F401
from t2t_keras.problems import t2t_import  # noqa: F401
