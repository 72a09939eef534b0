"""Searches: how outputs are chosen (``search.Search``, registered by
name), the shared loop beneath the multi-hypothesis ones, and the pieces
every search uses (length limits, a step's log-probabilities, constraints),
all in ``keras.ops``: the same search as a TensorFlow graph, under XLA and
under ``jax.jit``."""
