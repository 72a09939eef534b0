"""Validation by the task's metric during training: the model being
trained decodes the first lines of its problem's dev split (under the
problem's decoding constraint), and the problem's ``dev_score`` scores the
outputs (parsing: EVALB F1), else sacreBLEU against the dev references
(fairseq's --eval-bleu, Marian's --valid-metrics bleu).

Sources are the dev examples' ids as datagen encoded them (no re-encoding);
references are their target ids decoded back to text.
"""

from t2t_keras.decoding.batching import with_eos
from t2t_keras.decoding.decoder import Decoder
from t2t_keras.errors import UserError
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.metrics.bleu import corpus_score

# What text problems may validate by (higher is better): sacreBLEU's BLEU
# and chrF.
TEXT_METRICS = ("bleu", "chrf")


def _real(ids):
  """A record's ids without padding and without the final EOS."""
  ids = [int(i) for i in ids if i != PAD_ID]
  return ids[:-1] if ids and ids[-1] == EOS_ID else ids


def split_text(problem, data_dir, split, max_lines=None):
  """(source ids without EOS, source texts, reference texts) of the first
  ``max_lines`` (None: all) examples of a split of ``problem``'s data."""
  source_vocab = problem.input_vocab(data_dir)
  target_vocab = problem.target_vocab(data_dir)
  examples = problem.examples(split, data_dir)
  if max_lines:
    examples = examples.take(max_lines)
  ids, sources, references = [], [], []
  for example in examples.as_numpy_iterator():
    ids.append(_real(example["inputs"]))
    sources.append(source_vocab.decode(ids[-1]))
    references.append(target_vocab.decode(_real(example["targets"])))
  return ids, sources, references


class DevBleu:
  """Scores ``model`` on dev each time it is called, by the problem's
  ``validation_metric`` (``metric``: "bleu", "f1", ...).

  Args:
    model: the ``Seq2SeqModel`` being trained (its current weights decode).
    problem: the registered problem (dev examples, vocabularies,
      postprocess).
    data_dir: the problem's data.
    hparams: decode hparams (``decoder.decode_hparams``).
    max_lines: decode the first this many dev sentences; None: all.
    metric: "bleu" or "chrf" for a problem that validates by BLEU; None:
      the problem's ``validation_metric``.
  """

  def __init__(self, model, problem, data_dir, hparams, max_lines=None,
               metric=None):
    own = problem.validation_metric
    if metric and metric != own and (own not in TEXT_METRICS or
                                     metric not in TEXT_METRICS):
      choices = ", ".join(TEXT_METRICS) if own in TEXT_METRICS else own
      raise UserError(f"--eval_metric={metric}: {problem.name} validates by "
                      f"{choices}")
    ids, self.sources, self.references = split_text(problem, data_dir, "dev",
                                                    max_lines)
    self.encoded = [with_eos(i, hparams.max_input_length)[0] for i in ids]
    self.problem, self.data_dir = problem, data_dir
    self.metric = metric or own
    self.decoder = Decoder(model, problem.input_vocab(data_dir), hparams,
                           postprocess=problem.postprocess,
                           target_vocab=problem.target_vocab(data_dir),
                           constraint=problem.decode_constraint(data_dir),
                           repaired=problem.repaired if problem.repairs
                           else None)

  @property
  def lines(self):
    return len(self.encoded)

  def __call__(self):
    """(the metric of the current model on the dev lines, the outputs)."""
    outputs = self.decoder.decode_items(self.encoded, self.sources)
    score = None
    if self.metric not in TEXT_METRICS:
      score = self.problem.dev_score(outputs, self.references, self.sources,
                                     self.data_dir)
    if score is None:
      score, _ = corpus_score(self.metric, outputs, self.references)
    return score, outputs
