"""Starting a new run from another run's weights (tensor2tensor's
``--warm_start_from``): fine-tuning a trained model on a new domain.

Only a run with no checkpoint of its own is warm-started; once it has
saved, the same command resumes it as any run. The model weights come from
the source (a run directory, whose newest readable checkpoint is used, or a
checkpoint path); the optimizer is fresh and the step 0, unless
``optimizer`` asks for the source's optimizer state too (its moments and
its step, so the learning-rate schedule goes on where it was).

The two models must match, or the start stops with one line saying how:
the registered model, the vocabulary sizes, the vocabulary file (by its
SHA-256, recorded in model.json when a run starts), and every weight's
shape (naming the hparams that differ). Nothing is ever partly loaded.
"""

import os

import tensorflow as tf

from t2t_keras import checkpoint_io
from t2t_keras import json_files
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.hparams import HParams
from t2t_keras.models.builder import MODEL_SPEC


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


def check_compatible(source_dir, spec, hparams, model):
  """A one-line ``UserError`` if the run in ``source_dir`` cannot give its
  weights to ``model`` (built from ``spec``, the new run's model.json
  dict, and ``hparams``)."""
  where = f"--warm_start_from={source_dir}"
  src_spec = json_files.load(os.path.join(source_dir, MODEL_SPEC),
                             ("model", "input_vocab_size",
                              "target_vocab_size"))
  if src_spec["model"] != spec["model"]:
    raise UserError(f"{where} trained model {src_spec['model']}, this run "
                    f"trains {spec['model']}")
  for key in ("input_vocab_size", "target_vocab_size"):
    if src_spec[key] != spec[key]:
      raise UserError(f"{where} has a vocabulary of {src_spec[key]:,} "
                      f"pieces, this run's has {spec[key]:,} ({key}): "
                      "encode the new data with the source run's vocabulary")
  if (src_spec.get("vocab_sha256") and spec.get("vocab_sha256") and
      src_spec["vocab_sha256"] != spec["vocab_sha256"]):
    raise UserError(f"{where} was trained with a different vocabulary file "
                    "(same size, other pieces): copy the source run's "
                    "vocab.*.model into the new --data_dir before "
                    "t2t-datagen, so the new data is encoded with it")
  source_hparams = HParams.load(os.path.join(source_dir, "hparams.json"))
  src_model = _built(src_spec, source_hparams)
  ours = [tuple(w.shape) for w in model.weights]
  theirs = [tuple(w.shape) for w in src_model.weights]
  if ours != theirs:
    differ = sorted(k for k, v in hparams.values().items()
                    if k in source_hparams.values() and
                    source_hparams.get(k) != v and
                    _shapes_depend_on(k, src_spec, source_hparams, v))
    said = ", ".join(f"{k} {source_hparams.get(k)} there, {hparams.get(k)} "
                     "here" for k in differ)
    raise UserError(f"{where} has other weight shapes than this model"
                    + (f" ({said})" if said else "") +
                    "; a warm start needs the same model shape")


def _built(spec, hparams):
  from t2t_keras import registry  # pylint: disable=g-import-not-at-top
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


def warm_start(trainer, source, spec, hparams, optimizer=False):
  """Loads ``source``'s weights (and with ``optimizer`` its optimizer
  state) into ``trainer``. Returns the checkpoint path read."""
  path, source_dir = source_checkpoint(source)
  check_compatible(source_dir, spec, hparams, trainer.model)
  objects = {"model": trainer.model}
  if optimizer:
    objects["optimizer"] = trainer.optimizer
  status = checkpoint_io.restore(tf.train.Checkpoint(**objects), path)
  try:
    status.assert_existing_objects_matched()
  except AssertionError as e:
    raise UserError(f"--warm_start_from={source}: {path} does not hold "
                    f"every weight of this model: {str(e)[:200]}") from None
  return path
