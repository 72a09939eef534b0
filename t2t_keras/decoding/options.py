"""Decode options: the decode hparams every backend, the exporter and
validation decoding read, and how they are described in log lines."""

import re

from t2t_keras import hparam_ranges
from t2t_keras import registry
from t2t_keras.decoding.searches.search import make_search
from t2t_keras.decoding.searches.steps import ALPHA, BEAM_SIZE, EXTRA_LENGTH
from t2t_keras.errors import UserError
from t2t_keras.kernels import quantize
from t2t_keras.hparams import HParams

BATCH_SIZE = 32         # sentences per search call on a CPU


def sentences_a_batch(hparams):
  """Decode hparams' ``batch_size``, or ``BATCH_SIZE`` for 0 where the
  backend does not size the batch to the device (``decoding.backends.device_batch``
  does for checkpoints)."""
  return int(hparams.batch_size) or BATCH_SIZE


def decode_hparams(overrides="", defaults=None):
  """The paper's decoding settings (section 6.1), then a problem's
  ``defaults`` (parsing: beam 21, alpha 0.3, extra 300), then overrides.
  ``search`` names a registered search (``decoding.searches.search``; empty: beam,
  greedy for beam_size=1, sampling when ``sampling=topk|topp``, with
  ``top_k``, ``top_p``, ``temperature``, ``seed``, draws one output per
  sentence; beam search's ``length_reward`` adds that much to a finished
  hypothesis's score per token; ``batch_size`` sentences a search call, 0:
  what fits the device, ``decoding.backends.device_batch``; ``weights``:
  float32, or int8 / bfloat16, the decoder's matrices rounded once,
  ``kernels.quantize``). A search's own
  settings (its class's
  ``settings``) are added before the overrides apply."""
  hparams = HParams(search="", beam_size=BEAM_SIZE, alpha=ALPHA,
                    length_reward=0.0, extra_length=EXTRA_LENGTH,
                    batch_size=0, max_input_length=512,
                    return_beams=False, sampling="", top_k=0, top_p=1.0,
                    temperature=1.0, seed=0, weights="float32")
  hparams.override_from_dict(defaults or {})
  named = re.search(r"(?:^|,)\s*search\s*=\s*([^,]*)", overrides or "")
  name = named.group(1).strip() if named else hparams.search
  if name:
    for key, value in registry.lookup("search", name).settings.items():
      if key not in hparams:
        hparams.add_hparam(key, value)
  hparams.parse(overrides)
  hparam_ranges.check(hparams.values(), hparam_ranges.DECODE,
                      "decode hparams")
  if hparams.weights not in quantize.WEIGHTS:
    raise UserError(f"decode hparams: weights must be one of "
                    f"{', '.join(quantize.WEIGHTS)}, got {hparams.weights!r}")
  search = make_search(hparams)      # checks the search's own settings
  if hparams.return_beams and not search.nbest:
    raise UserError(f"return_beams goes with beam search, not "
                    f"{search.registered_name}")
  return hparams


def describe(hparams):
  """How decode ``hparams`` pick outputs, for log lines."""
  return make_search(hparams).describe()


def describe_precision(model, hparams=None):
  """What ``model`` computes in, for log lines: "float32", or e.g.
  "bfloat16 (float32 weights)", "float32 (int8 decoder weights)" where
  decode ``hparams`` round them."""
  compute = str(model.compute_dtype)
  rounded = hparams.weights if hparams is not None else "float32"
  if rounded != "float32":
    return f"{compute} ({rounded} decoder weights)"
  return compute if compute == model.variable_dtype else (
      f"{compute} ({model.variable_dtype} weights)")
