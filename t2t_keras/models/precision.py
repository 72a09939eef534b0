"""The ``activation_dtype`` hparam as a Keras dtype policy.

A model takes its layers' policy from Keras's global policy when it is
built: float32 variables either way, computations in the activation dtype
under a mixed policy. Training builds under the hparams' policy; commands
that rebuild a trained model (t2t-decoder, t2t-exporter) build under the
same one unless told otherwise.
"""

import contextlib

import keras

from t2t_keras.errors import UserError

# activation_dtype hparam -> Keras dtype policy.
POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16",
            "float16": "mixed_float16"}


@contextlib.contextmanager
def dtype_policy(activation_dtype):
  """Sets Keras's global dtype policy for the block, then restores it."""
  if activation_dtype not in POLICIES:
    raise UserError("activation_dtype must be one of "
                    f"{', '.join(sorted(POLICIES))}, got {activation_dtype!r}")
  policy = POLICIES[activation_dtype]
  previous = keras.config.dtype_policy()
  keras.config.set_dtype_policy(policy)
  try:
    yield
  finally:
    keras.config.set_dtype_policy(previous)


# CPU flags (as /proc/cpuinfo names them) of native bfloat16 units, with how
# the choice names them. Mixed bfloat16 trains 1.26-1.38x faster than
# float32 on an AVX512_BF16 CPU (docs/performance.md); without such units
# bfloat16 is emulated and slower.
BF16_UNITS = (("amx_bf16", "AMX bfloat16 tiles"),
              ("avx512_bf16", "AVX-512 bfloat16 instructions"))


def cpu_flags(path="/proc/cpuinfo"):
  """The set of the first processor's flags ("flags : ..." in Linux's
  /proc/cpuinfo); empty where the file is absent."""
  try:
    with open(path, encoding="utf-8") as f:
      for line in f:
        if line.startswith("flags"):
          return set(line.split(":", 1)[1].split())
  except OSError:
    pass
  return set()


def choose_activation_dtype(flags, gpus=0):
  """``activation_dtype=auto`` resolved: (dtype, why) for a machine with
  CPU ``flags`` (a set of /proc/cpuinfo names) and ``gpus`` visible GPUs.
  bfloat16 where the CPU has native bfloat16 units, else float32; with a
  GPU float32, since no GPU policy was measured."""
  if gpus:
    return "float32", (f"{gpus} GPU(s) visible; auto chooses only for CPUs "
                       "(activation_dtype=bfloat16 forces it)")
  for flag, units in BF16_UNITS:
    if flag in flags:
      return "bfloat16", f"the CPU has {units} ({flag})"
  return "float32", ("the CPU has no bfloat16 units (neither "
                     f"{' nor '.join(f for f, _ in BF16_UNITS)})")
