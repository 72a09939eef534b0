"""Validation by the task's metric during training: the model being
trained decodes the first lines of its problem's dev split (under the
problem's decoding constraint), and the problem's ``dev_score`` scores the
outputs (parsing: EVALB F1), else sacreBLEU against the dev references
(fairseq's --eval-bleu, Marian's --valid-metrics bleu).

Sources are the dev examples' ids as datagen encoded them (no re-encoding);
references are their target ids decoded back to text. With several
replicas each decodes a share of the lines on its own device at once; with
several workers each decodes every n-th line and all gather the outputs.
"""

import concurrent.futures

import tensorflow as tf

from t2t_keras.decoding.batching import with_eos
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.splits import split_text
from t2t_keras.errors import UserError
from t2t_keras.metrics.bleu import corpus_score

# What text problems may validate by (higher is better): sacreBLEU's BLEU
# and chrF.
TEXT_METRICS = ("bleu", "chrf")


def decode_on_devices(decoders, devices, strategy, items, sources):
  """Decodes ``items`` (prepared lines; ``sources`` their texts), the d-th
  of ``decoders`` taking every ``len(devices)``-th line from d on device
  ``devices[d]``, all at once (one thread each); ``devices`` [None]: the
  one decoder on the default device. Returns (outputs in the lines'
  order, how many postprocess repaired)."""
  def decode(d):
    decoder = decoders[d]
    decoder.stats.repaired = 0
    outputs = decoder.decode_items(items[d::len(devices)],
                                   sources[d::len(devices)])
    return outputs, decoder.stats.repaired

  if devices == [None]:
    return decode(0)
  # Traced one device at a time (a trace is not shared between threads),
  # then run at once: a search traced under a replica's device and the
  # strategy's scope reads that replica's copy of the weights.
  for decoder, device in zip(decoders, devices):
    with strategy.scope(), tf.device(device):
      decoder.trace()

  def run(d):
    with strategy.scope(), tf.device(devices[d]):
      return decode(d)
  with concurrent.futures.ThreadPoolExecutor(len(devices)) as pool:
    parts = list(pool.map(run, range(len(devices))))
  return interleaved([part for part, _ in parts]), sum(r for _, r in parts)


def interleaved(parts):
  """The lines of ``parts`` in their order, part d holding every
  ``len(parts)``-th line from line d (how the lines were shared)."""
  merged = [None] * sum(len(part) for part in parts)
  for d, part in enumerate(parts):
    merged[d::len(parts)] = part
  return merged


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
    strategy: the run's tf.distribute strategy: its local replicas decode
      a share of the lines each, at once, each reading its own copy of the
      weights; None: the default device decodes them all.
    share: (rank, workers, gather) on a run of several workers: this one
      decodes every ``workers``-th line from ``rank``, and ``gather(texts)``
      (``training.cluster.Cluster.gather_texts``) brings every worker's
      outputs; None: one worker decodes every line.
  """

  def __init__(self, model, problem, data_dir, hparams, max_lines=None,
               metric=None, strategy=None, share=None):
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
    self.strategy = strategy
    # (The default strategy has no worker devices: one replica.)
    devices = (list(strategy.extended.worker_devices) if strategy is not None
               and strategy.num_replicas_in_sync > 1 else [])
    self.devices = devices if len(devices) > 1 else [None]
    self.share = share
    self.decoders = [
        Decoder(model, problem.input_vocab(data_dir), hparams,
                postprocess=problem.postprocess,
                target_vocab=problem.target_vocab(data_dir),
                constraint=problem.decode_constraint(data_dir),
                repaired=problem.repaired if problem.repairs else None)
        for _ in self.devices]
    self.decoder = self.decoders[0]
    self.repaired = 0   # outputs the last call's postprocess repaired

  @property
  def lines(self):
    return len(self.encoded)

  def describe_split(self):
    """How the lines are shared, e.g. "over 2 workers x 2 replicas", or
    ""."""
    parts = []
    if self.share and self.share[1] > 1:
      parts.append(f"{self.share[1]} workers")
    if len(self.devices) > 1:
      parts.append(f"{len(self.devices)} replicas")
    return "over " + " x ".join(parts) if parts else ""

  def __call__(self):
    """(the metric of the current model on the dev lines, the outputs)."""
    rank, workers, gather = self.share or (0, 1, None)
    mine = list(range(rank, self.lines, workers))
    outputs, repaired = decode_on_devices(
        self.decoders, self.devices, self.strategy,
        [self.encoded[i] for i in mine], [self.sources[i] for i in mine])
    if workers > 1:
      parts = gather(outputs + [str(repaired)])
      outputs = interleaved([part[:-1] for part in parts])
      repaired = sum(int(part[-1]) for part in parts)
    self.repaired = repaired
    score = None
    if self.metric not in TEXT_METRICS:
      score = self.problem.dev_score(outputs, self.references, self.sources,
                                     self.data_dir)
    if score is None:
      score, _ = corpus_score(self.metric, outputs, self.references)
    return score, outputs
