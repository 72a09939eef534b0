"""A model prepared for decoding, beside the model it was made from
(CTranslate2's converted model, flax's ``decode=True``): the searches,
t2t-decoder, validation decoding, the exporter and the JAX search decode
one, and the paper's layers carry no decoding speed-ups.

    prepared = prepare_for_decoding(model)        # once, outside a trace
    prepared = prepare_for_decoding(model, fixed_weights=True)
    prepared = prepare_for_decoding(model, True, weights="int8")
    with prepared.reading(hypotheses) as decoding:    # in the search's trace
      state = decoding.encode(inputs)                 # the model contract
      cache = decoding.init_cache(state, max_length)
      logits, cache = decoding.decode_step(ids, step, cache)

Made once: with ``fixed_weights`` (t2t-decoder, the exporter; never for
validation while training), W^T and each self-attention's [W^Q W^K W^V] as
variables (``products.stored_matrices``); for a JAX search, which of the
decoder's matrices it holds in a layout for few rows (``held_matrices``).
With ``weights`` "int8" or "bfloat16", every matrix a step multiplies by
and W^T, rounded once here (``kernels.quantize``): the prepared model
decodes the model with those matrices rounded; the encoder, the embedding
lookups and the encoder-decoder keys and values (many rows once a batch)
read the float32 weights.
Made once a batch (``reading``, inside the traced search): the weights in
the compute dtype (``kernels.weights_once``), W^T where not stored, the
products the step reads (``products``). The step itself is the model's own
(``models.incremental``) with those products, so a prepared model decodes
what the model decodes (``tests/test_prepared.py``). A model that is not a
``Transformer`` (or overrides its ``decode_step``) decodes through its own
contract.
"""

import contextlib

from keras import ops

from t2t_keras.errors import UserError
from t2t_keras.kernels import one_row
from t2t_keras.kernels.weights_once import weights_once
from t2t_keras.models.ensemble import Ensemble, MemberMean
from t2t_keras.models.prepared import products as products_lib
from t2t_keras.models.prepared.held import held_matrices
from t2t_keras.models.prepared.products import round_weights

__all__ = ["prepare_for_decoding", "decoding_model", "held_matrices",
           "PreparedModel", "round_weights"]


class Decoding:
  """The model contract over one batch's products (``PreparedModel.
  reading``): encode, init_cache, decode_step, reorder_cache."""

  def __init__(self, model, products_for, hypotheses):
    self.model = model
    self._products_for = products_for   # one_row -> Products, or None
    self._hypotheses = hypotheses

  @property
  def compute_dtype(self):
    return self.model.compute_dtype

  def encode(self, inputs, training=None):
    return self.model.encode(inputs, training=training)

  def init_cache(self, state, max_length):
    return self.model.init_cache(state, max_length)

  def decode_step(self, ids, step, cache):
    if self._products_for is None:
      return self.model.decode_step(ids, step, cache)

    def run(one):
      return self.model.decode_step(ids, step, cache,
                                    self._products_for(one))

    if self._hypotheses != 1:
      return run(False)
    return one_row.step(lambda: run(True), lambda: run(False),
                        ops.shape(ids)[0], self.model.compute_dtype)

  def reorder_cache(self, cache, indices):
    return self.model.reorder_cache(cache, indices)


class _EnsembleDecoding(MemberMean):
  """An ensemble's contract over its members' ``Decoding``s."""

  def __init__(self, model, members):
    self.model, self.members = model, members

  @property
  def compute_dtype(self):
    return self.model.compute_dtype


class PreparedModel:
  """``model`` prepared for decoding (module docstring).

  Args:
    model: a built ``models.base.Seq2SeqModel``.
    stored: {(kind, layer): tf.Variable} from ``products.stored_matrices``.
    held: a JAX search's {key: product} (``held_matrices``' products), or
      None.
    members: an ensemble's members, prepared.
  """

  def __init__(self, model, stored=None, held=None, members=()):
    self.model = model
    self._stored = dict(stored or {})
    self._held = held
    self.members = list(members)

  @property
  def compute_dtype(self):
    return self.model.compute_dtype

  def variables(self):
    """The variables made once (a SavedModel tracks them)."""
    found = list(self._stored.values())
    for member in self.members:
      found += member.variables()
    return found

  @contextlib.contextmanager
  def reading(self, hypotheses=1):
    """Within it (inside the search's trace), the model contract over this
    batch's products: ``hypotheses`` a sentence a step (1: a step's rows
    are its sentences, and a step of one row multiplies on
    ``kernels.one_row``'s products)."""
    with weights_once(self.model):
      yield self.bind(hypotheses)

  def bind(self, hypotheses):
    """The ``Decoding`` of this batch (see ``reading``)."""
    if isinstance(self.model, Ensemble):
      return _EnsembleDecoding(self.model, [m.bind(hypotheses)
                                            for m in self.members])
    if not products_lib.walkable(self.model):
      return Decoding(self.model, None, hypotheses)
    stored = {key: v.read_value() for key, v in self._stored.items()}
    embedding = self.model.softmax_weights
    softmax = {}
    if ("softmax", embedding) in stored:
      softmax[embedding] = stored[("softmax", embedding)]
    elif self._held is None and hasattr(embedding, "embeddings"):
      softmax[embedding] = ops.transpose(ops.cast(embedding.embeddings,
                                                  embedding.compute_dtype))
    if self._held is not None:
      held = products_lib.HeldProducts(self._held, softmax)
      return Decoding(self.model, lambda one: held, hypotheses)
    # Each stack and its [b^Q b^K b^V] once a batch, outside the loop.
    stacked = {layer: (value, products_lib.stacked_bias(layer))
               for (kind, layer), value in stored.items() if kind == "stacked"}
    rounded = {layer: value for (kind, layer), value in stored.items()
               if kind == "dense"}
    made = {one: products_lib.StepProducts(softmax, stacked, one, rounded)
            for one in (True, False)}
    return Decoding(self.model, made.get, hypotheses)


def prepare_for_decoding(model, fixed_weights=False, held=None,
                         weights="float32"):
  """``model`` (a built ``Seq2SeqModel``; an ``Ensemble``'s members each)
  prepared for decoding; ``fixed_weights``: its weights no longer change,
  so W^T and the stacked kernels are stored now; ``held``: a JAX search's
  held products (rounded already where ``weights`` asks). ``weights``:
  "float32", or "int8" / "bfloat16": the step's matrices and W^T stored
  rounded (``kernels.quantize``; needs ``fixed_weights`` or ``held``). A
  ``PreparedModel`` is returned as it is."""
  if isinstance(model, PreparedModel):
    return model
  if isinstance(model, Ensemble):
    return PreparedModel(model, members=[
        prepare_for_decoding(m, fixed_weights, held, weights)
        for m in model.members])
  rounding = bool(products_lib.check_roundable(model, weights))
  if rounding and not (fixed_weights or held is not None):
    raise UserError(f"weights={weights} rounds a trained model's weights "
                    "once, for t2t-decoder and t2t-exporter; validation "
                    "while training decodes with weights=float32")
  stored = {}
  if (fixed_weights and products_lib.walkable(model) and
      (held is None or not rounding)):
    stored = products_lib.stored_matrices(model, weights)
  return PreparedModel(model, stored, held)


@contextlib.contextmanager
def decoding_model(model, hypotheses=1):
  """Inside a search's trace: ``model`` (a ``PreparedModel``, or a model
  prepared now) read for this batch (``PreparedModel.reading``)."""
  with prepare_for_decoding(model).reading(hypotheses) as decoding:
    yield decoding
