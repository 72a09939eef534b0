"""The registered searches under Keras's JAX backend, compiled with
``jax.jit``: the same code as the TensorFlow graph and XLA searches
(``keras.ops`` and ``tensor_ops``), the same ids from the same weights.

The model's weights enter the compiled search as arguments (a
``keras.StatelessScope`` maps each variable to its value), not as
constants: a search compiled once serves every later value of the weights,
a training run's or a moving average's, with no retrace. One program is
compiled a batch shape (and prefix width). On CPUs the matrices a step
multiplies by enter as well, held in a layout for few rows
(``models.prepared.held_matrices``: packed for ``kernels.rows_product``, or
transposed), the one measured fastest for the search's rows a step on this
CPU (once a process, ``kernels.layout_probe``), and the search decodes the
model prepared with them. With ``weights=int8|bfloat16`` they enter
rounded (``kernels.quantize``), in Keras's layout too.

    search = JaxSearch(model, decode_hparams("beam_size=4"))
    ids, scores = search(inputs)                  # int32 [batch, length]
    ids, scores = search(inputs, prefixes=p)      # forced target prefixes
    ids, scores = search(inputs, values=weights)  # other weight values

Only under ``KERAS_BACKEND=jax``; it imports no TensorFlow.
"""

import keras

from t2t_keras.decoding.searches.constraints import PrefixConstraint
from t2t_keras.decoding.searches.search import make_search
from t2t_keras.models.prepared import held_matrices, prepare_for_decoding


class JaxSearch:
  """The search ``options`` pick, over ``model``, compiled with jax.jit.

  Args:
    model: a built ``models.base.Seq2SeqModel``.
    options: decode hparams (``decoding.options.decode_hparams``).
    constraint: a ``decoding.searches.constraints.Constraint`` every search applies
      (a problem's ``decode_constraint``), or None.
    word_starts: with prefixes, bool [target vocab], the pieces that begin
      a word (a prefix is whole words), or None (its last word may go on).
  Call args:
    inputs: int32 [batch, length], EOS-terminated, 0-padded.
    prefixes: int32 [batch, prefix_length] 0-padded target prefixes, or
      None.
    values: the values of ``variables`` in order (default: the variables'
      own).
    layout: "packed", "transposed" (``held_matrices``', where they are on;
      packed where ``rows_product`` runs) or "keras", whatever ``layout()``
      would choose; None: its choice.
  Returns:
    (ids int32 [batch, n, max_length], scores float32 [batch, n]), as
    ``search.Search`` returns them.
  """

  def __init__(self, model, options, constraint=None, word_starts=None):
    if keras.backend.backend() != "jax":
      raise ValueError("JaxSearch runs under KERAS_BACKEND=jax, not "
                       f"{keras.backend.backend()}")
    import jax
    self.variables = list(model.trainable_variables) + list(
        model.non_trainable_variables)
    search = make_search(options)
    self._hypotheses = search.hypotheses()
    self._held = held_matrices(model, self.variables, options.weights)
    self._rounding = rounding = options.weights != "float32"
    if rounding and self._held is None:
      raise ValueError(f"weights={options.weights}: the model has no step "
                       "matrix among its variables to round")

    def run(values, arrays, inputs, prefixes, layout):
      held = (None if layout == "keras" and not rounding else
              self._held.products(arrays, layout))
      with keras.StatelessScope(
          state_mapping=list(zip(self.variables, values))):
        chosen = (constraint if prefixes is None else
                  PrefixConstraint(prefixes, word_starts))
        return search(prepare_for_decoding(model, held=held), inputs,
                      chosen)

    self._run = jax.jit(run, static_argnums=4)

  def layout(self, batch):
    """The layout a search of ``batch`` sentences reads the kernels in:
    "keras" where ``held_matrices`` is off, else the fastest for its rows
    (``HeldMatrices.choose``)."""
    if self._held is None:
      return "keras"
    return self._held.choose(batch * self._hypotheses)

  def layouts(self):
    """The layouts a search can read here: "keras", and ``held_matrices``'
    where they are on ("packed" where ``rows_product`` runs)."""
    if self._held is None:
      return ("keras",)
    return ("keras",) + self._held.layouts()

  def __call__(self, inputs, prefixes=None, values=None, layout=None):
    if values is None:
      values = [v.value for v in self.variables]
    values = list(values)
    if layout is None:
      layout = self.layout(inputs.shape[0])
    elif layout not in self.layouts():
      raise ValueError(f"layout {layout!r} is not one this search can read "
                       f"here; expected one of {self.layouts()}")
    arrays = ([] if layout == "keras" and not self._rounding else
              self._held.outside(values, layout))
    return self._run(values, arrays, inputs, prefixes, layout)
