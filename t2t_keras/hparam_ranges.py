"""The ranges of the numeric hparams a user sets, checked before TensorFlow
is imported, so that ``beam_size=0`` or ``batch_size=-1`` is one line naming
the value and its range, not a traceback minutes later (or a run that
silently does something else).

A range is (low, high, low_open, high_open); None is unbounded. No
TensorFlow here: the command line checks overrides with it.
"""

import glob
import json
import math
import os

from t2t_keras.errors import UserError

_AT_LEAST_1 = (1, None, False, False)
_AT_LEAST_0 = (0, None, False, False)
_POSITIVE = (0, None, True, False)
_PROBABILITY = (0, 1, False, True)   # [0, 1): a dropout rate, a smoothing

# Decode hparams (``decoding.options.decode_hparams``).
DECODE = {
    "beam_size": _AT_LEAST_1, "alpha": _AT_LEAST_0,
    "extra_length": _AT_LEAST_0, "batch_size": _AT_LEAST_0,
    "max_input_length": _AT_LEAST_1, "top_k": _AT_LEAST_0,
    "top_p": (0, 1, True, False), "temperature": _POSITIVE,
}

# Model and training hparams (the registered sets'; a name a set lacks is
# not checked).
MODEL = {
    "hidden_size": _AT_LEAST_1, "filter_size": _AT_LEAST_1,
    "num_heads": _AT_LEAST_1, "num_hidden_layers": _AT_LEAST_1,
    "num_encoder_layers": _AT_LEAST_0, "num_decoder_layers": _AT_LEAST_0,
    "attention_key_size": _AT_LEAST_0, "attention_value_size": _AT_LEAST_0,
    "batch_size": _AT_LEAST_1, "max_length": _AT_LEAST_1,
    "max_positions": _AT_LEAST_1,
    "layer_prepostprocess_dropout": _PROBABILITY,
    "attention_dropout": _PROBABILITY, "relu_dropout": _PROBABILITY,
    "label_smoothing": _PROBABILITY,
    # 0 holds the weights still (tests, a frozen comparison).
    "learning_rate": _AT_LEAST_0, "learning_rate_warmup_steps": _AT_LEAST_0,
    "learning_rate_decay_steps": _AT_LEAST_0,
    "gradient_accumulation_steps": _AT_LEAST_1, "train_steps": _AT_LEAST_1,
    "optimizer_adam_beta1": _PROBABILITY,
    "optimizer_adam_beta2": _PROBABILITY,
    "optimizer_adam_epsilon": _POSITIVE,
    "loss_scale_initial": _POSITIVE, "ema_decay": _PROBABILITY,
    "rdrop_alpha": _AT_LEAST_0, "alignment_loss_weight": _AT_LEAST_0,
    "learning_rate_step_offset": _AT_LEAST_0, "finetune_l2": _AT_LEAST_0,
    "finetune_freeze_steps": _AT_LEAST_0,
}


def describe(bounds):
  """'>= 1', '> 0', 'in [0, 1)' for a range."""
  low, high, low_open, high_open = bounds
  if high is None:
    return f"{'>' if low_open else '>='} {low:g}"
  return (f"in {'(' if low_open else '['}{low:g}, {high:g}"
          f"{')' if high_open else ']'}")


def inside(value, bounds):
  low, high, low_open, high_open = bounds
  if not math.isfinite(value):
    return False
  if low is not None and (value < low or (low_open and value == low)):
    return False
  return high is None or not (value > high or (high_open and value == high))


def check(values, ranges, where):
  """A one-line ``UserError`` for the first of ``values`` (name -> value)
  that ``ranges`` bounds and that lies outside its range; ``where`` names
  the setting (``--decode_hparams``)."""
  for name, value in values.items():
    bounds = ranges.get(name)
    if bounds is None or isinstance(value, bool) or not isinstance(
        value, (int, float)):
      continue
    if not inside(value, bounds):
      raise UserError(f"{where}: {name}={value!r} is out of range: expected "
                      f"{name} {describe(bounds)}")


def _numbers(overrides):
  """{name: int or float} of the ``name=number`` parts of an ``a=1,b=0.2``
  string as written; other parts are left to the parser, which names
  them."""
  values = {}
  for part in (overrides or "").split(","):
    name, _, text = part.partition("=")
    for kind in (int, float):
      try:
        values[name.strip()] = kind(text.strip())
        break
      except ValueError:
        continue
  return values


def check_overrides(overrides, ranges, where):
  """``check`` on the numbers of an ``a=1,b=0.2`` string (before the
  hparams that parse it exist)."""
  check(_numbers(overrides), ranges, where)


def check_beam(overrides, run_dir):
  """A ``beam_size`` in the decode ``overrides`` wider than the target
  vocabulary of the run in ``run_dir`` (from its model.json, when there
  is one) is a one-line ``UserError``: a beam holds distinct pieces."""
  beam = _numbers(overrides).get("beam_size")
  spec = os.path.join(run_dir or "", "model.json")
  if not isinstance(beam, int) or not run_dir or not os.path.isfile(spec):
    return
  try:
    with open(spec, encoding="utf-8") as f:
      vocab = int(json.load(f)["target_vocab_size"])
  except (OSError, ValueError, KeyError, TypeError):
    return   # the command's own load names a damaged model.json
  if beam > vocab:
    raise UserError(f"--decode_hparams: beam_size={beam} is "
                    f"out of range: expected beam_size in [1, {vocab}], the "
                    f"target vocabulary of {run_dir}")


def shortest_training_example(data_dir, problem_name):
  """The length (tokens, the longer side) of the shortest training example
  that t2t-datagen recorded in ``data_dir``'s ``NAME.shards.json`` (NAME:
  the problem's, or the one manifest there); None when none is recorded."""
  found = glob.glob(os.path.join(glob.escape(data_dir or "."),
                                 "*.shards.json"))
  own = [os.path.join(data_dir or ".", f"{name}.shards.json")
         for name in (problem_name, problem_name.removesuffix("_rev"))]
  path = next((p for p in own if p in found),
              found[0] if len(found) == 1 else None)
  if path is None:
    return None
  try:
    with open(path, encoding="utf-8") as f:
      lengths = json.load(f).get("lengths", {}).get("train", {})
    return min((int(k) for k, v in lengths.items() if v), default=None)
  except (OSError, ValueError, AttributeError, TypeError):
    return None   # a damaged one is named by the trainer


def check_batch_size(batch_size, data_dir, problem_name):
  """A ``batch_size`` (tokens a batch) below the shortest training example
  is a one-line ``UserError``: every batch would be one example longer than
  the batch asked for."""
  shortest = shortest_training_example(data_dir, problem_name)
  if shortest is not None and batch_size < shortest:
    raise UserError(
        f"--hparams: batch_size={batch_size} is out of range: the shortest "
        f"training example in {data_dir} has {shortest} tokens, so expected "
        f"batch_size >= {shortest} (batch_size counts tokens a batch)")
