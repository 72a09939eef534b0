"""One call from an hparams set name to a built Keras model."""

import json
import os
import sys

from t2t_keras.io import json_files
from t2t_keras import registry
from t2t_keras.errors import MissingFileError, UserError
from t2t_keras.hparams import HParams
from t2t_keras.io.outputs import output_file
from t2t_keras.models.ensemble import Ensemble
from t2t_keras.models.precision import dtype_policy


def build_model(hparams_set="transformer_base", vocab_size=None,
                hparams_overrides="", model="transformer",
                input_vocab_size=None, target_vocab_size=None, hparams=None):
  """Builds a registered model with all its weights created.

  Args:
    hparams_set: a registered hparams set name, e.g. "transformer_base".
    vocab_size: the shared vocabulary size (both sides).
    hparams_overrides: tensor2tensor-style "a=1,b=0.2" overrides.
    model: a registered model name.
    input_vocab_size, target_vocab_size: instead of ``vocab_size`` when the
      two sides differ (needs shared_embedding=False).
    hparams: an HParams to use instead of ``hparams_set``.

  Returns:
    a built keras.Model (``.count_params()`` works).

  Example:
    >>> model = t2t_keras.build_model("transformer_base", vocab_size=37000)
  """
  if hparams is None:
    hparams = registry.hparams(hparams_set)
  elif not isinstance(hparams, HParams):
    raise TypeError(f"hparams must be an HParams, got {type(hparams)}")
  hparams.parse(hparams_overrides)
  input_vocab_size = input_vocab_size or vocab_size
  if not input_vocab_size:
    raise UserError("build_model needs vocab_size (or input_vocab_size)")
  net = registry.model(model)(hparams, input_vocab_size,
                              target_vocab_size or input_vocab_size)
  net.build()
  return net


MODEL_SPEC = "model.json"


# What model.json must hold, and of what type.
SPEC_TYPES = {"model": str, "input_vocab_size": int, "target_vocab_size": int}


def model_spec(model_name, input_vocab_size, target_vocab_size,
               problem_name=None, flags=None, vocab_sha256=None,
               data_dir=None, train_data_sha256=None):
  """What rebuilding the model needs, as model.json holds it (and the
  absolute ``data_dir`` it trained on, where a mapped warm start finds its
  vocabulary, and a digest of its training shards, which a resumed run
  must find the same)."""
  return {"model": model_name, "input_vocab_size": int(input_vocab_size),
          "target_vocab_size": int(target_vocab_size),
          "problem": problem_name, "flags": dict(flags or {}),
          "vocab_sha256": vocab_sha256,
          "train_data_sha256": train_data_sha256,
          "data_dir": data_dir and os.path.abspath(data_dir)}


def save_model_spec(output_dir, spec):
  """Writes a ``model_spec`` dict as model.json (beside hparams.json), whole
  or not at all."""
  with output_file(os.path.join(output_dir, MODEL_SPEC), "w",
                   encoding="utf-8") as f:
    json.dump(spec, f, indent=2, sort_keys=True, default=str)


def build_model_from_dir(model_dir, activation_dtype=None):
  """The built model a training run in ``model_dir`` trains (weights fresh;
  restore a checkpoint into it), computing in ``activation_dtype``
  ("float32", "bfloat16", "float16"; default: the run's hparams, as it
  trained). Returns (model, hparams, spec dict)."""
  paths = [os.path.join(model_dir, n) for n in ("hparams.json", MODEL_SPEC)]
  missing = [p for p in paths if not os.path.isfile(p)]
  if missing:
    raise MissingFileError(f"{', '.join(missing)} missing: is {model_dir} "
                            "the --output_dir of a t2t-trainer run?")
  hparams = HParams.load(paths[0], like=registry.hparams("transformer_base"))
  spec = json_files.load(paths[1], SPEC_TYPES,
      "t2t-trainer writes it when a run starts: restore it from a copy")
  for name in ("input_vocab_size", "target_vocab_size"):
    if not 1 <= spec[name] < 2**31:
      raise UserError(f"{paths[1]} is damaged: {name} is {spec[name]}, "
                      "expected a vocabulary size from 1 to 2^31 - 1; "
                      "restore it from a copy")
  with dtype_policy(activation_dtype
                    or hparams.get("activation_dtype", "float32")):
    net = _model_class(spec, model_dir)(hparams, spec["input_vocab_size"],
                                        spec["target_vocab_size"])
    net.build()
  return net, hparams, spec


def _model_class(spec, model_dir):
  """The registered model class a run's model.json names. A run trained
  with --t2t_usr_dir records that path, but its code is imported only when
  a command is given --t2t_usr_dir (Keras's safe_mode, Hugging Face's
  trust_remote_code): a model registered there and not imported is one
  line naming the path and the flag."""
  try:
    return registry.model(spec["model"])
  except registry.RegistryError:
    recorded = (spec.get("flags") or {}).get("t2t_usr_dir")
    if not recorded:
      raise
    raise UserError(
        f"{model_dir} was trained with --t2t_usr_dir={recorded}, which "
        f"registers its model '{spec['model']}'; a run's code is imported "
        f"only when asked: pass --t2t_usr_dir={recorded} (or another "
        "directory that registers it) if you trust it") from None


def _fallback_hint(error, path):
  """``error`` (``UnreadableCheckpoint``) as a one-line ``UserError`` that
  names the newest checkpoint beside ``path`` that reads."""
  from t2t_keras.io import checkpoint_io
  good = checkpoint_io.newest_readable(os.path.dirname(path), skip=(path,))
  hint = (f"the newest checkpoint that reads is {good}: pass "
          f"--checkpoint_path={good}" if good else
          f"no other checkpoint in {os.path.dirname(path)} reads")
  return UserError(f"{error}; {hint}")


def restore_newest(restore, path, directory=None, log=None):
  """``restore(path)`` (which raises ``checkpoint_io.UnreadableCheckpoint``
  for a checkpoint that does not read); returns (its result, the path
  restored). When ``path`` was chosen as ``directory``'s latest and a
  trainer deleted it before or while it was read
  (``checkpoint_io.deleted_by_trainer``), the newest checkpoint of
  ``directory`` that reads is restored instead, and ``log`` says so. A
  checkpoint that is still listed and does not read is a one-line
  ``UserError`` naming the newest one that does (to pass as
  --checkpoint_path)."""
  from t2t_keras.io import checkpoint_io
  for _ in range(20):   # a trainer saving faster than this reads
    try:
      return restore(path), path
    except checkpoint_io.UnreadableCheckpoint as e:
      if directory is None or not checkpoint_io.deleted_by_trainer(
          path, directory):
        raise _fallback_hint(e, path) from None
      newer = checkpoint_io.newest_readable(directory)
      if newer is None:
        raise _fallback_hint(e, path) from None
      (log or _to_stderr)(
          f"{path} was deleted while it was read (a trainer keeps only its "
          f"last checkpoints); using {newer}, the newest that reads")
      path = newer
  raise UserError(f"the checkpoints of {directory} were all deleted while "
                  "they were read; pass --checkpoint_path=ONE that is kept")


def _to_stderr(line):
  print(line, file=sys.stderr, flush=True)


def load_model_from_dir(model_dir, checkpoint_path=None,
                        activation_dtype=None, log=None):
  """The model of a training run with trained weights: from
  ``checkpoint_path`` (a checkpoint, or a directory whose latest is used,
  e.g. an averaged one) or else ``model_dir``'s latest checkpoint.
  It computes in ``activation_dtype`` (default: the run's, so a run
  trained with mixed bfloat16 decodes in bfloat16; the weights are float32
  either way). A latest checkpoint that a running trainer deletes before
  it is read gives way to the newest that reads, said through ``log``
  (default: standard error). Returns (model, hparams, spec, checkpoint
  used)."""
  # TensorFlow only here: building a model needs none (JAX hosts).
  import tensorflow as tf
  from t2t_keras.io import checkpoint_io
  path = checkpoint_path or model_dir
  chosen_in = path if os.path.isdir(path) else None
  if os.path.isdir(path):
    # (A trainer saving beside us can make TensorFlow's answer None for an
    # instant: the newest listed checkpoint that reads is then taken.)
    latest = tf.train.latest_checkpoint(path) or (
        not checkpoint_io.state_damaged(path) and checkpoint_io.listed(path)
        and checkpoint_io.newest_readable(path))
    if not latest and checkpoint_io.state_damaged(path):
      found = checkpoint_io.found(path)
      raise UserError(
          f"{os.path.join(path, 'checkpoint')} is damaged (not a checkpoint "
          "state file); " + (f"the newest checkpoint beside it is "
                             f"{found[-1]}: pass --checkpoint_path="
                             f"{found[-1]}" if found else
                             "no checkpoint is beside it"))
    if not latest:
      raise MissingFileError(f"no checkpoint in {path}")
    path = latest
  elif not tf.io.gfile.exists(path + ".index"):
    raise MissingFileError(f"no checkpoint {path} (expected {path}.index)")
  source_dir = model_dir if os.path.isfile(
      os.path.join(model_dir, MODEL_SPEC)) else os.path.dirname(path)
  net, hparams, spec = build_model_from_dir(source_dir, activation_dtype)
  missing, path = restore_newest(_restorer(net), path, chosen_in, log)
  if missing:
    raise UserError(
        f"checkpoint {path} does not hold every weight of the model in "
        f"{source_dir} (another model, or written before t2t_keras 0.1's "
        f"checkpoint fix): {missing[:300]}")
  return net, hparams, spec, path


def _restorer(net):
  """path -> what of ``net`` the checkpoint ``path`` did not hold (empty:
  all of it), its ``model`` read into ``net``: by ``tf.train.Checkpoint``
  (a fresh one each call: a failed restore leaves deferred reads of its
  file behind), or under another Keras backend by the attribute paths of
  the checkpoint's object graph (``checkpoint_paths``)."""
  import keras
  import tensorflow as tf
  from t2t_keras.io import checkpoint_io
  from t2t_keras.io import checkpoint_paths
  if keras.backend.backend() != "tensorflow":
    return lambda path: ", ".join(checkpoint_paths.restore(net, path))

  def restore(path):
    status = checkpoint_io.restore(tf.train.Checkpoint(model=net), path)
    try:
      status.assert_existing_objects_matched()
    except AssertionError as e:
      return str(e)
    return ""
  return restore


def load_models(model_dir, checkpoint_path=None, activation_dtype=None):
  """``load_model_from_dir``, or for a comma-separated ``checkpoint_path``
  (checkpoints or run directories of one problem and vocabulary) an
  ``ensemble.Ensemble`` of each, each read with its own run's model.json.
  Returns (model, hparams, spec, checkpoints used) with the first member's
  hparams and spec."""
  paths = [p for p in (checkpoint_path or "").split(",") if p]
  if len(paths) <= 1:
    return load_model_from_dir(model_dir, checkpoint_path, activation_dtype)
  loaded = [load_model_from_dir(p if os.path.isdir(p) else
                                os.path.dirname(p), p, activation_dtype)
            for p in paths]
  return (Ensemble([model for model, _, _, _ in loaded]), loaded[0][1],
          loaded[0][2], ",".join(path for _, _, _, path in loaded))


def check_trained_with(spec, model_dir, hparams_set=None, model=None):
  """A ``UserError`` when a given ``--hparams_set`` or ``--model`` is not
  the one the run in ``model_dir`` was trained with (its model.json
  ``spec``); the flags are only checked, the run's own settings build the
  model."""
  trained = spec.get("flags", {})
  for flag, given in (("hparams_set", hparams_set), ("model", model)):
    if given and trained.get(flag) and trained[flag] != given:
      raise UserError(f"--{flag}={given}, but {model_dir} was trained with "
                      f"--{flag}={trained[flag]}")
