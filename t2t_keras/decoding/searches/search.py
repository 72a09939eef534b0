"""Searches: how outputs are chosen, registered by name.

A search is a ``Search`` subclass registered with the registry's search
decorator (CONTRIBUTING.md); the decode hparam ``search=name`` picks it
(t2t-decoder's ``--decode_hparams``, the exporter, validation decoding).
Built in: ``beam`` (beam_search.py), ``greedy`` (token_by_token.py) and
``sample`` (sampling.py). With ``search`` empty the paper's rule picks:
sampling when ``sampling`` names a method, greedy when ``beam_size`` is 1,
else beam search. A search that keeps one hypothesis a sentence subclasses
``token_by_token.TokenSearch`` and writes only its ``choose`` step; one
that keeps several subclasses ``hypotheses.MultiHypothesisSearch`` and
writes only its ``select`` step.
"""

from t2t_keras import registry


class Search:
  """Chooses outputs for a batch of sentences.

  Args:
    options: the decode hparams (``decoding.backends.decoder.decode_hparams``):
      beam_size, alpha, extra_length, return_beams, sampling, top_k, top_p,
      temperature, seed, and any a search adds by override.
  Attributes:
    nbest: whether it can return several outputs a sentence
      (``return_beams``).
    settings: {name: default} of decode hparams this search adds (set with
      ``--decode_hparams="search=name,name=value"``).
  """
  nbest = False
  settings = {}

  def __init__(self, options):
    self.options = options

  def __call__(self, model, inputs, constraint=None):
    """model: a ``models.base.Seq2SeqModel``; inputs: int [batch, length]
    (EOS-terminated, 0-padded); constraint: a ``decoding.searches.constraints.
    Constraint`` or None. Returns (ids int32 [batch, n, max_length],
    0-padded after EOS, best first; scores float32 [batch, n])."""
    raise NotImplementedError

  def hypotheses(self):
    """How many hypotheses a sentence each step decodes: the rows a step
    multiplies by the weights, a sentence."""
    return 1

  def describe(self):
    """The settings that matter, for log lines."""
    return f"{self.registered_name}, extra length {self.options.extra_length}"


def search_name(options):
  """The search ``options`` pick (see the module docstring)."""
  if options.get("search", ""):
    return options.search
  if options.sampling:
    return "sample"
  return "greedy" if options.beam_size == 1 else "beam"


def make_search(options):
  """The registered search ``options`` pick, made with them; an unknown
  name is a one-line error listing the close ones."""
  return registry.lookup("search", search_name(options))(options)


def search_function(model, options):
  """``(ids, constraint=None) -> (ids [batch, n, length], scores [batch,
  n])``: ``model`` decoded by the search ``options`` pick."""
  search = make_search(options)
  return lambda inputs, constraint=None: search(model, inputs, constraint)
