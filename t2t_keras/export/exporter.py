"""SavedModels that stock TF Serving loads: strings in, translations out.

The graph holds tokenization (tensorflow-text's SentencePiece ops), beam
search (core TensorFlow ops) and detokenization; no Python function and no
custom op, and every op is one that TF Serving 2.20 has (checked after
each export: ``serving_ops``). The saved object (``_Served``) tracks the
model's variables, so that session-based loaders (saved_model_cli, TF
Serving's C++ loader) find them, and traces each signature's search once.

Signatures:
  serving_default: inputs tf.string [batch] -> outputs tf.string [batch],
    scores float32 [batch] (length-penalized log-probabilities).
  decode_ids: input_ids int32 [batch, length] (0-padded, EOS-terminated) ->
    output_ids int32 [batch, length], scores float32 [batch].
  prefixed (problems without a decoding constraint): inputs tf.string
    [batch], prefixes tf.string [batch] ("" for none) -> outputs, scores as
    serving_default, each output beginning with its prefix, whole words:
    a new word (or the end) follows it. A separate signature because TF
    Serving's signatures have no optional inputs.
  prefixed_partial: as prefixed, but the prefix's last word may go on
    (interactive completion).
A problem's decoding constraint (parsing's trees) is part of every search.
Each signature decodes a request ``batch_size`` sentences at a time (the
decode hparam; 0: ``decoding.options.BATCH_SIZE``, 32), so a request's
memory is bounded by one chunk's, whatever the number of sentences.
Each version carries TF Serving's warm-up requests (``warmup``): one
request per signature, run as TF Serving loads it.
"""

import os
import time

import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.decoding.searches.constraints import (PrefixConstraint,
                                                     word_starts_of)
from t2t_keras.decoding.options import sentences_a_batch
from t2t_keras.decoding.searches.search import search_function
from t2t_keras.models.prepared import prepare_for_decoding
from t2t_keras.errors import ExistingFileError, UserError
from t2t_keras.io.logs import native_stderr_silenced
from t2t_keras.io.outputs import output_dir
from t2t_keras.export import warmup
from t2t_keras.export.serving_ops import SERVING_RELEASE, missing_ops


def export(model, vocab, hparams, export_dir, version=None,
           target_vocab=None, constraint=None, xla=False):
  """Writes ``<export_dir>/<version>/`` (TF Serving's layout; version an
  integer, default: seconds since the epoch). Returns the path.

  ``model`` is a ``models.base.Seq2SeqModel``; ``vocab`` tokenizes the
  inputs and detokenizes the outputs unless ``target_vocab`` is given;
  ``constraint`` (a ``decoding.searches.constraints.Constraint``) applies to every
  search. ``xla``: each signature's search (ids in, ids out: not the
  tokenizers, which XLA cannot compile) is a function marked for XLA
  (``jit_compile``), which TensorFlow compiles when it runs it and TF
  Serving compiles when started with its XLA flags; the other ops stay
  as they are."""
  target_vocab = target_vocab or vocab
  version = int(version if version is not None else time.time())
  path = os.path.join(export_dir, str(version))
  if os.path.exists(path):
    raise ExistingFileError(f"{path} exists; TF Serving versions are never "
                          "overwritten: pick another --export_version")
  best_only = hparams.copy()
  best_only.return_beams = False
  prepared = prepare_for_decoding(model, fixed_weights=True,
                                  weights=hparams.weights)
  beams = search_function(prepared, best_only)

  def compiled(fn):
    return (tf.function(fn, jit_compile=True, autograph=False) if xla
            else fn)

  def best(ids, make_constraint):
    out, scores = beams(ids, make_constraint())
    return out[:, 0], scores[:, 0]               # the best of each batch row

  plain = compiled(lambda ids: best(ids, lambda: constraint))
  prefixed = {
      whole: compiled(lambda ids, prefixes, whole=whole: best(
          ids, lambda: PrefixConstraint(
              prefixes, word_starts_of(target_vocab) if whole else None)))
      for whole in (True, False)}

  chunk = sentences_a_batch(hparams)

  def in_chunks(ids, prefixes, whole_words):
    """The search over ``chunk`` sentences at a time (a request's memory
    is one chunk's, whatever its size), the rows joined in order. Every
    chunk has the request's padded width, so its outputs have one
    length."""
    count = (tf.shape(ids)[0] + chunk - 1) // chunk
    found = [tf.TensorArray(dtype, size=count, infer_shape=False,
                            element_shape=tf.TensorShape([None] * rank))
             for dtype, rank in ((tf.int32, 2), (tf.float32, 1))]

    def body(i, out, scores):
      rows = slice(i * chunk, (i + 1) * chunk)
      got = (plain(ids[rows]) if prefixes is None else
             prefixed[whole_words](ids[rows], prefixes[rows]))
      return i + 1, out.write(i, got[0]), scores.write(i, got[1])

    _, out, scores = tf.while_loop(lambda i, *_: i < count, body,
                                   (tf.constant(0), *found))
    return out.concat(), scores.concat()

  def search(ids, prefixes=None, whole_words=True):
    def run():
      return in_chunks(ids, prefixes, whole_words)

    def nothing():   # a request of no sentences: no outputs, not an error
      return tf.zeros([0, 1], tf.int32), tf.zeros([0], tf.float32)
    return tf.cond(tf.shape(ids)[0] > 0, run, nothing)

  tokenizer = vocab.tf_tokenizer
  limit = hparams.max_input_length - 1

  def source_ids(inputs):
    ids = tokenizer.tokenize(inputs)[:, :limit]
    eos = tf.ones([tf.shape(inputs)[0], 1], ids.dtype)
    ids = tf.concat([ids, tf.RaggedTensor.from_tensor(eos)], axis=1)
    return tf.cast(ids.to_tensor(0), tf.int32)

  def serve_strings(inputs):
    out, scores = search(source_ids(inputs))
    return {"outputs": target_vocab.tf_decode(out), "scores": scores}

  def serve_prefixed(inputs, prefixes, whole_words=True):
    prefix_ids = target_vocab.tf_tokenizer.tokenize(prefixes)[:, :limit]
    out, scores = search(source_ids(inputs),
                         tf.cast(prefix_ids.to_tensor(0), tf.int32),
                         whole_words)
    return {"outputs": target_vocab.tf_decode(out), "scores": scores}

  def serve_ids(input_ids):
    out, scores = search(input_ids)
    return {"output_ids": out, "scores": scores}

  served = _Served(model, [tokenizer, target_vocab.tf_tokenizer],
                   prepared.variables())
  strings = tf.TensorSpec([None], tf.string, name="inputs")
  served.add("serving_default", serve_strings, strings)
  served.add("decode_ids", serve_ids,
             tf.TensorSpec([None, None], tf.int32, name="input_ids"))
  if constraint is None:
    prefixes = tf.TensorSpec([None], tf.string, name="prefixes")
    served.add("prefixed", serve_prefixed, strings, prefixes)
    served.add("prefixed_partial",
               lambda inputs, prefixes: serve_prefixed(inputs, prefixes,
                                                       whole_words=False),
               strings, prefixes)
  # Written under a hidden name and renamed whole: TF Serving, which loads
  # the highest numbered version, never sees half of one.
  with output_dir(path) as partial:
    try:
      # SentencePiece's note as ops run.
      with native_stderr_silenced():
        served.write(partial)
      warmup.write(partial, warmup.requests(vocab, target_vocab,
                                            served.names),
                   model_name=os.path.basename(os.path.abspath(export_dir)))
    except checkpoint_io.WRITE_ERRORS as e:
      raise checkpoint_io.SaveFailed(
          f"could not write the SavedModel {path} "
          f"({checkpoint_io.cause(e)}); nothing was exported") from None
    missing = missing_ops(partial)
    if missing:
      raise UserError(f"the exported graph needs op(s) that "
                      f"{SERVING_RELEASE} does not have: "
                      f"{', '.join(missing)}; nothing exported")
  return path


class _Served(tf.Module):
  """What a SavedModel holds: the model's variables (tracked, so that
  session-based loaders such as saved_model_cli and TF Serving's C++ loader
  restore them), the tokenizers' resources, and the signatures.

  Each signature is a ``tf.function`` with its input signature, first
  traced inside ``tf.saved_model.save``: the save context is part of a
  function's cache key, so a trace made before it (as
  ``keras.export.ExportArchive`` makes, to list the variables) is made
  again there, and the beam search would be traced twice."""

  def __init__(self, model, tokenizers, transposed):
    super().__init__()
    self.model_variables = [v.value for v in model.variables]
    self.tokenizers = list(tokenizers)
    # What the prepared model stored (W^T, the stacked step kernels),
    # which the searches read.
    self.transposed = list(transposed)
    self._names = ()     # a tuple: tf.Module would track a dict's values

  def add(self, name, fn, *specs):
    """Serves ``fn`` as signature ``name``; ``specs`` name its inputs.
    Traced without AutoGraph, as the Decoder's search: there is no Python
    control flow on tensors in a signature."""
    traced = tf.function(fn, input_signature=specs, autograph=False)
    setattr(self, name, traced)
    self._names += (name,)

  @property
  def names(self):
    """The signatures' names, in the order they were added."""
    return self._names

  def write(self, path):
    """Writes the SavedModel to ``path``, tracing each signature."""
    tf.saved_model.save(self, path, signatures={
        name: getattr(self, name) for name in self._names})
