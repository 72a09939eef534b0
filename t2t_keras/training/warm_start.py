"""Starting a new run from another run's weights (tensor2tensor's
``--warm_start_from``): fine-tuning a trained model on a new domain.

Only a run with no checkpoint of its own is warm-started; once it has
saved, the same command resumes it as any run. The model weights come from
the source (a run directory, whose newest readable checkpoint is used, or a
checkpoint path); the optimizer is fresh and the step 0, unless
``optimizer`` asks for the source's optimizer state too (its moments and
its step, so the learning-rate schedule goes on where it was).

``plan`` checks everything before the new run writes a file; ``warm_start``
loads. The two models must match, or the start stops with one line saying
how: the registered model and every weight's shape (naming the hparams that
differ). The vocabulary must be the source's (its size, and its file by the
SHA-256 model.json records), unless ``vocab="map"``: then the rows of the
embeddings and the softmax are carried over piece by piece
(``data.vocab_map``), from the source's vocabulary in the data directory
its model.json names. Nothing is ever partly loaded.
"""

import dataclasses
import os
from typing import Optional

import tensorflow as tf

from t2t_keras.io import checkpoint_io
from t2t_keras.io import json_files
from t2t_keras import registry
from t2t_keras.data.vocab_check import vocabs_digest
from t2t_keras.data.vocab_map import piece_map
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.hparams import HParams
from t2t_keras.kernels.keras_internals import nested_layers
from t2t_keras.models.builder import MODEL_SPEC, SPEC_TYPES
from t2t_keras.layers.embedding import TokenEmbedding

VOCAB_MODES = ("same", "map")
# A mapping that keeps fewer of the new pieces than this is refused: the
# source would give the new model little more than its byte pieces.
MIN_SHARED = 0.10
_MAP_HINT = ("or pass --warm_start_vocab=map to carry its rows over piece "
             "by piece")


@dataclasses.dataclass(frozen=True)
class WarmStartPlan:
  """What ``warm_start`` loads: the checkpoint, its run directory, and
  with a mapped vocabulary the ``PieceMap`` per side ({"input": ...,
  "target": ...}; None: the same vocabulary)."""
  path: str
  source_dir: str
  maps: Optional[dict] = None

  def describe(self):
    """The line that says what a mapped vocabulary kept, or None."""
    if self.maps is None:
      return None
    said = []
    for side, found in self.maps.items():
      if found in [m for s, m in self.maps.items() if s < side]:
        continue   # one vocabulary for both sides: said once
      said.append(f"{found.kept:,} of {found.size:,} pieces kept from "
                  f"{self.source_dir}, {found.new:,} new" +
                  ("" if self.maps["input"] is self.maps["target"]
                   else f" ({side})"))
    return "; ".join(said)


def source_checkpoint(source):
  """The checkpoint a warm start reads: ``source`` itself, or the newest
  readable one of the run directory ``source``; and its run directory."""
  if os.path.isdir(source):
    path = checkpoint_io.newest_readable(source)
    if path is None:
      raise MissingFileError(f"--warm_start_from={source}: no checkpoint "
                             "that reads in that directory")
    return path, source
  if not os.path.isfile(source + ".index"):
    raise MissingFileError(f"--warm_start_from={source}: neither a run "
                           f"directory nor a checkpoint ({source}.index is "
                           "missing)")
  return source, os.path.dirname(source)


def plan(source, spec, hparams, vocab="same", problem=None, data_dir=None):
  """The ``WarmStartPlan`` for a new run (``spec``, its model.json dict;
  ``hparams``; ``problem`` and ``data_dir``, its data, which ``vocab="map"``
  reads), or a one-line ``UserError`` saying why ``source`` cannot start
  it. Reads only; writes nothing."""
  if vocab not in VOCAB_MODES:
    raise UserError(f"--warm_start_vocab={vocab}: expected one of "
                    f"{', '.join(VOCAB_MODES)}")
  path, source_dir = source_checkpoint(source)
  where = f"--warm_start_from={source_dir}"
  src_spec = json_files.load(os.path.join(source_dir, MODEL_SPEC),
                             SPEC_TYPES)
  if src_spec["model"] != spec["model"]:
    raise UserError(f"{where} trained model {src_spec['model']}, this run "
                    f"trains {spec['model']}")
  maps = None
  if vocab == "same":
    _check_same_vocab(where, src_spec, spec)
  else:
    maps = _piece_maps(where, source_dir, src_spec, problem, data_dir)
  source_hparams = HParams.load(os.path.join(source_dir, "hparams.json"),
                                like=hparams)
  # Shapes are compared at this run's vocabulary sizes: a mapped
  # vocabulary changes the embeddings' rows and nothing else.
  sized = dict(src_spec, input_vocab_size=spec["input_vocab_size"],
               target_vocab_size=spec["target_vocab_size"])
  ours = [tuple(w.shape) for w in _built(spec, hparams).weights]
  theirs = [tuple(w.shape) for w in _built(sized, source_hparams).weights]
  if ours != theirs:
    differ = sorted(k for k, v in hparams.values().items()
                    if k in source_hparams.values() and
                    source_hparams.get(k) != v and
                    _shapes_depend_on(k, sized, source_hparams, v))
    said = ", ".join(f"{k} {source_hparams.get(k)} there, {hparams.get(k)} "
                     "here" for k in differ)
    raise UserError(f"{where} has other weight shapes than this model"
                    + (f" ({said})" if said else "") +
                    "; a warm start needs the same model shape")
  return WarmStartPlan(path, source_dir, maps)


def _check_same_vocab(where, src_spec, spec):
  for key in ("input_vocab_size", "target_vocab_size"):
    if src_spec[key] != spec[key]:
      raise UserError(f"{where} has a vocabulary of {src_spec[key]:,} "
                      f"pieces, this run's has {spec[key]:,} ({key}): "
                      "encode the new data with the source run's "
                      f"vocabulary, {_MAP_HINT}")
  if (src_spec.get("vocab_sha256") and spec.get("vocab_sha256") and
      src_spec["vocab_sha256"] != spec["vocab_sha256"]):
    raise UserError(f"{where} was trained with a different vocabulary file "
                    "(same size, other pieces): copy the source run's "
                    "vocab.*.model into the new --data_dir before "
                    f"t2t-datagen, {_MAP_HINT}")


def _piece_maps(where, source_dir, src_spec, problem, data_dir):
  """{"input": PieceMap, "target": PieceMap} from the source run's
  vocabularies (in the data directory its model.json records, checked
  against its SHA-256) to ``problem``'s in ``data_dir``."""
  src_data = src_spec.get("data_dir") or (
      src_spec.get("flags") or {}).get("data_dir")   # older runs: the flag
  if not src_data or not src_spec.get("problem"):
    raise UserError(f"{where}: its model.json names no data directory, "
                    "so its vocabulary cannot be found for "
                    "--warm_start_vocab=map")
  try:
    src_problem = registry.problem(src_spec["problem"]).for_data(src_data)
    old = (src_problem.input_vocab(src_data),
           src_problem.target_vocab(src_data))
    new = problem.input_vocab(data_dir), problem.target_vocab(data_dir)
  except UserError as e:
    raise UserError(f"--warm_start_vocab=map: {e}") from None
  if not all(hasattr(v, "all_pieces") for v in old + new):
    raise UserError("--warm_start_vocab=map maps vocabularies of pieces; "
                    f"{src_spec['problem']} or this problem has none")
  recorded = src_spec.get("vocab_sha256")
  if recorded and vocabs_digest(old) != recorded:
    raise UserError(f"--warm_start_vocab=map: the vocabulary in {src_data} "
                    f"(the data directory {source_dir}/{MODEL_SPEC} names) "
                    "is not the one that run was trained with")
  maps = {"input": piece_map(old[0], new[0])}
  same = (old[0].model_proto == old[1].model_proto and
          new[0].model_proto == new[1].model_proto)
  maps["target"] = maps["input"] if same else piece_map(old[1], new[1])
  for side, found in maps.items():
    if found.shared_fraction < MIN_SHARED:
      raise UserError(
          f"--warm_start_vocab=map: only {found.kept:,} of {found.size:,} "
          f"pieces of {data_dir}'s {side} vocabulary are in {src_data}'s "
          f"({found.shared_fraction:.1%}, under {MIN_SHARED:.0%}): too few "
          "to carry the model over; train from scratch")
  return maps


def _built(spec, hparams):
  net = registry.model(spec["model"])(hparams, spec["input_vocab_size"],
                                      spec["target_vocab_size"])
  net.build()
  return net


def _shapes_depend_on(key, spec, hparams, value):
  """Whether changing hparam ``key`` to ``value`` changes weight shapes."""
  changed = hparams.copy()
  try:
    changed.set_hparam(key, value)
  except (UserError, ValueError, AttributeError):
    return False
  return ([tuple(w.shape) for w in _built(spec, changed).weights] !=
          [tuple(w.shape) for w in _built(spec, hparams).weights])


def recorded(spec, source, vocab, output_dir):
  """``spec`` (a model.json dict) with "warm_start": {"from": the source's
  absolute path, "vocab": the vocabulary mode}, what ``t2t-avg-all
  --interpolate`` starts from again: this command's ``source``, or where
  it is not given (a resume without --warm_start_from), what ``output_dir``
  recorded before."""
  if source:
    return dict(spec, warm_start={"from": os.path.abspath(source),
                                  "vocab": vocab or "same"})
  path = os.path.join(output_dir, MODEL_SPEC)
  if os.path.isfile(path):
    try:
      before = json_files.load(path, SPEC_TYPES).get("warm_start")
    except UserError:
      before = None   # a damaged model.json is check_model_spec's to name
    if before:
      return dict(spec, warm_start=before)
  return spec


def warm_start(trainer, planned, optimizer=False):
  """Loads the ``WarmStartPlan``'s weights (and with ``optimizer`` its
  optimizer state; not with a mapped vocabulary) into ``trainer``."""
  if planned.maps is not None:
    _load_mapped(trainer.model, planned)
    return
  objects = {"model": trainer.model}
  if optimizer:
    objects["optimizer"] = trainer.optimizer
  _restore(objects, planned.path)


def _restore(objects, path):
  status = checkpoint_io.restore(tf.train.Checkpoint(**objects), path)
  try:
    status.assert_existing_objects_matched()
  except AssertionError as e:
    raise UserError(f"--warm_start_from: {path} does not hold every weight "
                    f"of this model: {str(e)[:200]}") from None


def _load_mapped(model, planned):
  """Restores the source into a model of its own vocabulary sizes, then
  copies every weight into ``model``: those of the token embeddings (and
  softmax) row by row through the piece maps."""
  src_spec = json_files.load(os.path.join(planned.source_dir, MODEL_SPEC))
  source = _built(src_spec, HParams.load(
      os.path.join(planned.source_dir, "hparams.json")))
  _restore({"model": source}, planned.path)
  sides = _vocab_sides(model)
  for theirs, ours in zip(source.weights, model.weights):
    value = theirs.numpy()
    if id(ours) in sides:
      value = planned.maps[sides[id(ours)]].apply(value).astype(value.dtype)
    ours.assign(value)


def _vocab_sides(model):
  """{id(variable): "input" or "target"} for ``model``'s token embedding
  matrices (one [vocab, d_model] matrix each; a shared one is "target",
  and sharing needs one vocabulary)."""
  sides = {}
  for layer in nested_layers(model):
    if isinstance(layer, TokenEmbedding):
      side = "input" if layer.name == "input_embedding" else "target"
      sides.setdefault(id(layer.embeddings), side)
  return sides
