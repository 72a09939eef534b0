"""The base class of registered problems, with every hook the commands use.

A problem knows its vocabulary sizes and yields examples as dicts of 1-D
int64 tensors ``{"inputs": [source_length], "targets": [target_length]}``,
each ending in EOS (``t2t_keras.ids``); id 0 is padding. Subclasses must
implement ``vocab_sizes`` and ``examples``; every other hook has a working
default, written here with what calls it:

| hook | called by | default |
| --- | --- | --- |
| ``OPTIONS``, ``configure`` | t2t-datagen flags | no options |
| ``for_data`` | every command that reads ``data_dir`` | the problem as it is |
| ``generate_data`` | t2t-datagen | nothing to generate |
| ``batches`` | t2t-trainer | token-budget length buckets of ``examples`` |
| ``count_longer`` | t2t-trainer (examples over ``max_length``) | a pass over ``examples`` |
| ``input_vocab``, ``target_vocab`` | t2t-decoder, t2t-exporter | ``vocab`` |
| ``vocab`` | the two above | none: the problem cannot be decoded from text |
| ``decode_defaults`` | t2t-decoder, t2t-exporter | the paper's settings |
| ``postprocess`` | t2t-decoder | the decoded text unchanged |
| ``repaired`` | t2t-decoder (``repaired N of M``) | never (no repair) |
| ``decode_constraint`` | every search, scoring, the export | None |
| ``validation_bleu`` | t2t-trainer (``--eval_bleu`` default) | False |
| ``validation_metric`` | t2t-trainer's dev decoding | "bleu" |
| ``dev_score`` | the same | None: sacreBLEU of the outputs |
| ``copies_source`` | t2t-trainer (``alignment_loss_weight``) | False |
"""

from t2t_keras.data import pipeline
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line

SPLITS = ("train", "dev", "test")


class Problem:
  """Base class of registered problems (see the module docstring)."""

  # Names that t2t-datagen's flags may set through ``configure``.
  OPTIONS = ()
  # Decode hparams that replace the paper's defaults for this problem
  # (t2t_keras.decoding.backends.decoder.decode_hparams), e.g. {"beam_size": 21}.
  decode_defaults = {}
  # Whether t2t-trainer decodes dev and scores its BLEU at each evaluation
  # by default (translation problems); otherwise dev loss picks the best
  # checkpoint.
  validation_bleu = False
  # What that decoding scores ("bleu", or the problem's own metric computed
  # by ``dev_score``, e.g. parsing's "f1").
  validation_metric = "bleu"
  # Decode hparams of the trainer's dev decoding, over ``decode_defaults``.
  eval_decode_defaults = {}
  # Whether every target copies all of its source's tokens, in order,
  # between tokens of its own (parsing_wsj's words as leaves): guided
  # alignment derives its alignment from that (training.guided_alignment).
  copies_source = False

  @property
  def name(self):
    return getattr(type(self), "registered_name", type(self).__name__)

  def configure(self, **options):
    """Sets ``OPTIONS`` on this instance; None values are ignored. The
    values set are kept in ``configured``."""
    self.configured = dict(getattr(self, "configured", {}))
    for key, value in options.items():
      if value is None:
        continue
      if key not in self.OPTIONS:
        known = ", ".join(self.OPTIONS) or "none"
        raise UserError(f"problem {self.name} has no option {key!r}; "
                        f"options: {known}")
      setattr(self, key, value)
      self.configured[key] = value
    return self

  def for_data(self, data_dir):
    """This problem with the options datagen recorded in ``data_dir``
    (parsing's tree linearization), so that training, decoding and export
    read the data as it was written. Default: the problem as it is."""
    del data_dir
    return self

  # -- data -----------------------------------------------------------------
  def generate_data(self, data_dir, tmp_dir=None, raw_dir=None,
                    raw_prefixes=None, byte_budget=None, log=log_line):
    """Writes the vocabulary and examples into ``data_dir``; re-running
    skips what is done. Default: nothing to write (examples are made on the
    fly)."""
    del data_dir, tmp_dir, raw_dir, raw_prefixes, byte_budget
    log(f"{self.name} generates its examples on the fly; nothing to do")

  def vocab_sizes(self, data_dir):
    """(input_vocab_size, target_vocab_size)."""
    raise NotImplementedError

  def examples(self, split, data_dir, seed=None, input_context=None):
    """An unbatched tf.data.Dataset of example dicts for ``split``;
    ``input_context`` (tf.distribute.InputContext) shards it per worker."""
    raise NotImplementedError

  def count_longer(self, split, data_dir, max_length):
    """(examples, how many are longer than ``max_length`` tokens) of a
    finite ``split``, or None for an endless one. Default: one pass over
    ``examples``."""
    return pipeline.count_longer(self.examples(split, data_dir), max_length)

  def batches(self, split, data_dir, hparams, seed=None, input_context=None,
              pad_to_bounds=False):
    """Batches of about ``hparams.batch_size`` tokens, grouped by length.

    Training batches are shuffled (seeded), repeat forever and drop examples
    longer than ``hparams.max_length``; dev and test batches are one pass.
    ``pad_to_bounds``: batches padded to their length bucket's bound (few
    shapes, for XLA; ``pipeline.batch_by_tokens``).
    """
    if split not in SPLITS:
      raise UserError(f"split must be one of {SPLITS}, got {split!r}")
    examples = self.examples(split, data_dir, seed=seed,
                             input_context=input_context)
    return pipeline.batch_by_tokens(
        examples, hparams.batch_size, hparams.max_length,
        training=split == "train", seed=seed, pad_to_bounds=pad_to_bounds)

  # -- text -----------------------------------------------------------------
  def vocab(self, data_dir):
    """The vocabulary of both sides (``SubwordVocab``: ``encode``,
    ``decode``, ``size`` and the graph ops ``tf_tokenizer``, ``tf_decode``).
    Default: none, and decoding from text is refused in one line."""
    del data_dir
    raise UserError(f"problem {self.name} has no text vocabulary, so it "
                    "cannot be decoded from text or exported; use a problem "
                    "with one (see t2t-trainer --registry_help)")

  def input_vocab(self, data_dir):
    """The vocabulary of the source side; default ``vocab``."""
    return self.vocab(data_dir)

  def target_vocab(self, data_dir):
    """The vocabulary of the target side; default ``vocab``."""
    return self.vocab(data_dir)

  def postprocess(self, text, source):
    """The decoder's output line from the decoded ``text`` and the
    ``source`` line (parsing repairs trees here). Default: ``text``."""
    del source
    return text

  def repaired(self, text, source):
    """Whether ``postprocess`` had to repair ``text``. Default: never."""
    del text, source
    return False

  @property
  def repairs(self):
    """Whether ``postprocess`` may repair outputs: ``repaired`` is
    overridden."""
    return type(self).repaired is not Problem.repaired

  def decode_constraint(self, data_dir):
    """A ``decoding.searches.constraints.Constraint`` every search of this problem
    applies (parsing: well-formed trees), or None."""
    del data_dir
    return None

  def dev_score(self, outputs, references, sources, data_dir):
    """The figure named ``validation_metric`` (higher is better) of the
    postprocessed dev ``outputs``, given the dev ``references`` and
    ``sources`` (texts); None: sacreBLEU (the default)."""
    del outputs, references, sources, data_dir
    return None
