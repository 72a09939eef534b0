"""A few rows times a packed W at the speed of reading W (JAX on CPUs).

A decoding step multiplies one row a hypothesis by every decoder matrix
and the pre-softmax one; it reads each weight once. XLA's CPU dot packs W
into panels on every call, which at one to a few rows costs more than the
products: ``benchmarks/step_floor.py``'s chain of the base model's 49
products of a step takes 1.2-1.3x as long at one row (greedy) and 2.2-2.5x
at four (beam 4) with XLA's dot (TensorFlow's or JAX's) as with
``rows_product.cc``, which reads W packed once a set of weights (AVX-512
EPYC):

    packed = pack(w)                 # [K, N] -> [ceil(N / P), K, P]
    y = product(x, packed, n)        # x [..., K] -> [..., N], float32
    packed, scales = pack_int8(q, s) # weights=int8 (kernels.quantize)
    y = product(x, packed, n, scales)
    packed = pack(w_bfloat16)        # weights=bfloat16: bfloat16 panels

Rounded weights are read at a quarter (int8) or half (bfloat16) of the
bytes and converted to float32 in registers; the sums stay float32.

``product`` is a call into an XLA FFI handler: ``rows_product.cc`` is
compiled here with ``$CXX``, g++ or clang++ (``-O3 -march=native``, XLA's
FFI headers from jaxlib) at the first ``available()`` of a process, into
``$T2T_KERAS_CACHE`` (default ``~/.cache/t2t_keras``) under a name made
from the source, the flags and the CPU, and reused after. Where there is no
compiler, or the build or its loading fails, ``available()`` is False and
the searches read their other layouts (``kernel_layout``); why is in
``unavailable_reason()``.
"""

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile

from t2t_keras.io.cache import cache_folder, cpu_key

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "rows_product.cc")
TARGET = "t2t_rows_product"
# The handler of each panel dtype.
TARGETS = {"float32": TARGET, "int8": "t2t_rows_product_int8",
           "bfloat16": "t2t_rows_product_bf16"}
FLAGS = ("-O3", "-march=native", "-std=c++17", "-shared", "-fPIC")
ROWS_MAX = 64   # more rows than this: XLA's dot (``product``)
_REASON = []


def _build(compiler, include):
  """The path of the compiled library, building it if it is not cached."""
  with open(SOURCE, "rb") as f:
    source = f.read()
  key = hashlib.sha256(source + " ".join(FLAGS + (compiler, include))
                       .encode() + cpu_key().encode()).hexdigest()[:16]
  folder = cache_folder()
  path = os.path.join(folder, f"rows_product_{key}.so")
  if os.path.exists(path):
    return path
  os.makedirs(folder, exist_ok=True)
  handle, partial = tempfile.mkstemp(suffix=".so", dir=folder)
  os.close(handle)
  try:
    subprocess.run([compiler, *FLAGS, "-I", include, SOURCE, "-o", partial],
                   check=True, capture_output=True, text=True, timeout=300)
    os.replace(partial, path)   # whole or not at all, beside other processes
  finally:
    if os.path.exists(partial):
      os.remove(partial)
  return path


@functools.lru_cache(maxsize=None)
def _library():
  """(ctypes library, panel width P), registered with JAX, or None."""
  compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which(
      "clang++")
  if not compiler:
    _REASON.append("no C++ compiler (g++ or clang++, or $CXX) found")
    return None
  try:
    import jax
    path = _build(compiler, jax.ffi.include_dir())
    library = ctypes.cdll.LoadLibrary(path)
    for target in TARGETS.values():
      jax.ffi.register_ffi_target(
          target, jax.ffi.pycapsule(getattr(library, target)),
          platform="cpu")
  except (OSError, subprocess.SubprocessError, AttributeError) as e:
    detail = getattr(e, "stderr", None) or str(e)
    _REASON.append(f"{SOURCE} did not build or load: {detail.strip()[-300:]}")
    return None
  return library, int(library.t2t_rows_panel_width())


def available():
  """Whether ``product`` runs here (module docstring)."""
  return _library() is not None


def unavailable_reason():
  """Why ``available()`` is False, or ''."""
  return "" if available() else (_REASON[-1] if _REASON else "")


def panel_width():
  """P, the packed layout's panel width (64 where AVX-512, else 32)."""
  return _library()[1]


def _panels(w, dtype):
  """``w`` [K, N] (of ``dtype``) as [ceil(N / P), K, P], zero past N."""
  import jax.numpy as jnp
  width = panel_width()
  k, n = w.shape
  panels = -(-n // width)
  w = jnp.pad(jnp.asarray(w, dtype), ((0, 0), (0, panels * width - n)))
  return jnp.transpose(jnp.reshape(w, (k, panels, width)), (1, 0, 2))


def pack(w):
  """``w`` [K, N] (a JAX or numpy array) as [ceil(N / P), K, P], zero past
  N: float32, or bfloat16 where ``w`` is bfloat16."""
  import jax.numpy as jnp
  dtype = jnp.bfloat16 if w.dtype == jnp.bfloat16 else jnp.float32
  return _panels(w, dtype)


def pack_int8(q, scale):
  """Q [K, N] int8 and s [N] (``kernels.quantize.int8``) -> (Q's panels
  [ceil(N / P), K, P] int8, s padded with ones to [ceil(N / P) P])."""
  import jax.numpy as jnp
  packed = _panels(q, jnp.int8)
  padded = packed.shape[0] * packed.shape[2] - scale.shape[0]
  return packed, jnp.pad(jnp.asarray(scale, jnp.float32), (0, padded),
                         constant_values=1.0)


def unpack(packed, n, scales=None):
  """``pack``'s inverse: [ceil(N / P), K, P] -> [K, n], float32 (times
  ``scales`` where given)."""
  import jax.numpy as jnp
  panels, k, width = packed.shape
  w = jnp.reshape(jnp.transpose(packed, (1, 0, 2)), (k, panels * width))
  w = jnp.asarray(w[:, :n], jnp.float32)
  return w if scales is None else w * scales[:n]


def product(x, packed, n, scales=None):
  """x [..., K] float32 times the W that ``packed`` holds -> [..., n]
  (int8 panels: times their ``scales``). Over ``ROWS_MAX`` rows (a batch's
  source, not a step) XLA's dot of W unpacked is as fast or faster, and is
  used."""
  import jax
  import jax.numpy as jnp
  lead = x.shape[:-1]
  rows = jnp.reshape(x, (-1, x.shape[-1]))
  if rows.shape[0] > ROWS_MAX:
    return jnp.reshape(rows @ unpack(packed, n, scales), lead + (n,))
  kind = {jnp.dtype(jnp.int8): "int8", jnp.dtype(jnp.bfloat16): "bfloat16"}
  target = TARGETS[kind.get(jnp.dtype(packed.dtype), "float32")]
  operands = (rows, packed) if scales is None else (rows, packed, scales)
  out = jax.ffi.ffi_call(
      target, jax.ShapeDtypeStruct((rows.shape[0], n), jnp.float32))(
          *operands)
  return jnp.reshape(out, lead + (n,))


def held_product(x, held, n):
  """``product`` of ``held`` as ``pack`` or ``pack_int8`` made it: the
  panels, or (int8 panels, scales)."""
  packed, scales = held if isinstance(held, tuple) else (held, None)
  return product(x, packed, n, scales)
