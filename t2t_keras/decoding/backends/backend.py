"""One protocol for decoding lines, whatever holds the model: a checkpoint
(``decoder.Decoder``), an exported SavedModel
(``saved_model.SavedModelDecoder``) or a CTranslate2 export
(``ct2.Ct2Decoder``). ``stream.decode_stream`` and t2t-decoder use only
this interface.

The base class does what every backend shares: each line is prepared once
(encoded, cut to ``max_input_length`` and counted), the lines are sorted by
length into batches, each batch is decoded by the backend, the outputs go
back in their input order, post-processed by the problem (repairs counted),
with statistics and progress.
"""

import dataclasses
import time

from t2t_keras.errors import UserError, check_signals


@dataclasses.dataclass
class DecodeStats:
  sentences: int = 0
  target_tokens: int = 0
  truncated: int = 0
  repaired: int = 0
  seconds: float = 0.0


class Backend:
  """Decodes lists of lines.

  A backend sets ``hparams`` (decode hparams: ``batch_size``,
  ``max_input_length``, ``return_beams``), ``postprocess`` (``(text,
  source) -> line`` or None) and ``repaired`` (``(text, source) -> bool`` or
  None), and implements:

    prepare(line) -> (item, cut): what its batches take (source ids with
      EOS, or the line) and whether the line was cut;
    batches(items) -> lists of indices into ``items``, similar lengths
      together;
    decode_batch(items, prefixes) -> one (output, target tokens) per item:
      the output text, or with ``return_beams`` [(text, score)], best first.

  ``prefix_kind`` says how target prefixes reach ``decode_batch``:
  "text", "ids" (``prepare_prefix``) or None (refused).
  """
  prefix_kind = None
  postprocess = None
  repaired = None

  def __init__(self):
    self.stats = DecodeStats()

  def prepare_prefix(self, prefix):
    return prefix

  def decode(self, lines, progress=None, prefixes=None):
    """Decoded strings, one per line (with return_beams, a list per line
    of (string, score) pairs, best first). ``prefixes``: optional target
    prefixes (str, "" for none), one per line, each output's beginning.
    ``progress(sentences)`` is called after each batch with the number of
    sentences this backend has done in all."""
    items = []
    for line in lines:
      item, cut = self.prepare(line)
      self.stats.truncated += cut
      items.append(item)
    return self.decode_items(items, lines, progress, prefixes)

  def decode_items(self, items, sources, progress=None, prefixes=None):
    """``decode`` of lines already prepared; ``sources`` are their texts
    (for ``postprocess``)."""
    if prefixes is not None:
      if self.prefix_kind is None:
        raise UserError(f"{type(self).__name__} cannot force target "
                        "prefixes")
      prefixes = [self.prepare_prefix(p) for p in prefixes]
    start = time.time()
    results = [None] * len(items)
    for chunk in self.batches(items):
      check_signals()   # a stop whose exception a GC callback dropped
      outputs = self.decode_batch(
          [items[i] for i in chunk],
          None if prefixes is None else [prefixes[i] for i in chunk])
      for index, (output, tokens) in zip(chunk, outputs):
        source = sources[index]
        results[index] = ([(self.finish(t, source), s) for t, s in output]
                          if isinstance(output, list) else
                          self.finish(output, source))
        self.stats.target_tokens += tokens
      self.stats.sentences += len(chunk)
      if progress:
        progress(self.stats.sentences)
    self.stats.seconds += time.time() - start
    return results

  def finish(self, text, source):
    """The problem's post-processing of one output, repairs counted."""
    if self.repaired and self.repaired(text, source):
      self.stats.repaired += 1
    return self.postprocess(text, source) if self.postprocess else text
