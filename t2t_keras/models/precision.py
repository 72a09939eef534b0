"""The ``activation_dtype`` hparam as a Keras dtype policy.

A model takes its layers' policy from Keras's global policy when it is
built: float32 variables either way, computations in the activation dtype
under a mixed policy. Training builds under the hparams' policy; commands
that rebuild a trained model (t2t-decoder, t2t-exporter) build under the
same one unless told otherwise.
"""

import contextlib

import keras

from t2t_keras.errors import UserError

# activation_dtype hparam -> Keras dtype policy.
POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16",
            "float16": "mixed_float16"}


@contextlib.contextmanager
def dtype_policy(activation_dtype):
  """Sets Keras's global dtype policy for the block, then restores it."""
  if activation_dtype not in POLICIES:
    raise UserError("activation_dtype must be one of "
                    f"{', '.join(sorted(POLICIES))}, got {activation_dtype!r}")
  policy = POLICIES[activation_dtype]
  previous = keras.config.dtype_policy()
  keras.config.set_dtype_policy(policy)
  try:
    yield
  finally:
    keras.config.set_dtype_policy(previous)
