"""Searches: how outputs are chosen (``search.Search``, registered by
name), the shared loop beneath the multi-hypothesis ones, and the pieces
every search uses (length limits, a step's log-probabilities, constraints),
all in ``keras.ops``: the same search as a TensorFlow graph, under XLA and
under ``jax.jit``."""

# The built-in searches register when imported: the registry loads this
# package on the first lookup of a search.
from t2t_keras.decoding.searches import beam_search  # noqa: F401
from t2t_keras.decoding.searches import sampling  # noqa: F401
from t2t_keras.decoding.searches import token_by_token  # noqa: F401
