"""Decoding reads each weight in the compute dtype once a batch, not once a
step.

Under a mixed policy (``mixed_bfloat16``) Keras keeps float32 variables and
casts each one to the compute dtype where a layer reads it. Inside a
decoding loop that read happens every step: a greedy step over 32 sentences
of the base model cast all 25 M decoder weights (100 MB read, 50 MB written)
for products over 32 rows, and ran slower than float32 (46 against 51
sentences/s on a 2-core AVX-512 bf16 CPU). Under ``weights_once(model)``
every autocast read of a model weight returns a cast made when the scope was
entered, before the loop, which the loop captures as a constant: the same
values, so the same outputs bit for bit, without the per-step casts.

Keras's own hook: a ``keras.StatelessScope`` whose ``get_current_value`` a
variable consults before its stored value. This one answers only reads
under an autocast scope of a dtype it holds casts for (the variable then
casts the answer to that same dtype: no op) and leaves every other read
(float32 layers, non-float variables, reads outside any layer) to the
variable, so it cannot change what any read returns.
"""

import contextlib

import keras
from keras.src.backend.common import variables as keras_variables

from t2t_keras import kernels


class _CastWeights(keras.StatelessScope):
  """Answers autocast reads of ``model``'s weights from casts made once."""

  def __init__(self, model, dtype):
    super().__init__()
    self._casts = {}
    with keras_variables.AutocastScope(dtype):
      for weight in model.weights:
        # ``dtype`` here is the autocast dtype exactly where a read casts.
        if weight.dtype == dtype:
          self._casts[id(weight)] = weight.value
    self._dtype = dtype

  def get_current_value(self, variable):
    scope = keras_variables.get_autocast_scope()
    cast = (None if scope is None or scope.dtype != self._dtype else
            self._casts.get(id(variable)))
    if cast is None and self.original_scope is not None:
      # Inside a stateless scope of its own (the JAX search passes the
      # weights in one): the values it holds, not the stored ones.
      return self.original_scope.get_current_value(variable)
    return cast


def weights_once(model):
  """A context in which ``model``'s autocast weight reads are cast once.

  Enter it inside the traced function, around the encoder and the decoding
  loop. A no-op context where the model's compute and variable dtypes agree
  (float32), the model is not built yet (its weights would be created in
  the scope) or the kernels are off (``kernels.enabled()``).
  """
  compute = keras.backend.standardize_dtype(model.compute_dtype)
  if (not kernels.enabled() or not model.built or compute == model.variable_dtype
      or "float" not in compute):
    return contextlib.nullcontext()
  return _CastWeights(model, compute)
