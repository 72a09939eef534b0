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


def _capability(gpu):
  """(major, minor) of a device description, or None."""
  found = gpu.get("compute_capability")
  return tuple(found) if found else None


def choose_gpu_dtype(gpus):
  """``activation_dtype=auto`` on GPUs: (dtype, why) for ``gpus``, device
  descriptions as ``tf.config.experimental.get_device_details`` gives them
  (``{"device_name": "NVIDIA A100-SXM4-40GB", "compute_capability": (8,
  0)}``). The least capable GPU decides: compute capability 8.0 and up has
  bfloat16 tensor cores (Ampere, Ada, Hopper, Blackwell); 7.x has float16
  ones only (Volta, Turing: float16, which training pairs with loss
  scaling); below 7.0 there are no tensor cores, and float32."""
  capabilities = [_capability(g) for g in gpus]
  names = sorted({g.get("device_name") or "a GPU" for g in gpus})
  which = f"{len(gpus)} GPU(s) ({', '.join(names)})"
  if None in capabilities:
    return "float32", (f"{which}: a compute capability is unknown "
                       "(activation_dtype=bfloat16 or float16 forces one)")
  least = min(capabilities)
  cc = f"compute capability {least[0]}.{least[1]}"
  if least >= (8, 0):
    return "bfloat16", f"{which}: {cc} has bfloat16 tensor cores"
  if least >= (7, 0):
    return "float16", (f"{which}: {cc} has float16 tensor cores, not "
                       "bfloat16 ones (trained with loss scaling)")
  return "float32", f"{which}: {cc} has no tensor cores"


def choose_activation_dtype(flags, gpus=()):
  """``activation_dtype=auto`` resolved: (dtype, why) for a machine with
  CPU ``flags`` (a set of /proc/cpuinfo names) and ``gpus``, the visible
  GPUs' descriptions (``choose_gpu_dtype``, which decides when there are
  any). On a CPU: bfloat16 where it has native bfloat16 units, else
  float32."""
  if gpus:
    return choose_gpu_dtype(gpus)
  for flag, units in BF16_UNITS:
    if flag in flags:
      return "bfloat16", f"the CPU has {units} ({flag})"
  return "float32", ("the CPU has no bfloat16 units (neither "
                     f"{' nor '.join(f for f, _ in BF16_UNITS)})")
