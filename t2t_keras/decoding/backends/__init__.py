"""Backends: where the model runs and how a batch of ids reaches it (the
TensorFlow graph and XLA, JAX, a SavedModel, CTranslate2), each behind
``backend.Backend``."""
