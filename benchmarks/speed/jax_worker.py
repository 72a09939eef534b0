"""speed_table.py's worker for t2t_keras under Keras's JAX backend: the
registered searches compiled with ``jax.jit`` (``decoding.backends.jax_search``),
the base model with random weights, no TensorFlow imported. int8 and
bfloat16 round the decoder's weights (``--decode_hparams=weights=...``).

  python benchmarks/speed/jax_worker.py --task beam|greedy[,...]
      --model base|big|toy [--precision float32|int8|bfloat16] [--quick]
      [--sentences N] [--output_length L]
"""

import os
import sys

os.environ["KERAS_BACKEND"] = "jax"   # speed_table.py sets it too
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("T2T_KERAS_TREE") or
                os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)

import jax
import keras
import numpy as np

import shapes
from t2t_keras import registry
try:
  from t2t_keras.decoding.backends.jax_search import JaxSearch
except ImportError:   # a tree from before decoding/ had folders
  from t2t_keras.decoding.jax_search import JaxSearch
from t2t_keras.decoding.options import decode_hparams


def decode(args, s):
  """Seconds a batch of ``s["sentences"]`` random sources, decoded by
  JaxSearch to ``s["output_length"]`` tokens (compiled in the warm-up)."""
  keras.utils.set_random_seed(0)
  hparams = registry.hparams("transformer_base")
  hparams.parse(shapes.overrides(args.model))
  model = registry.model("transformer")(hparams, s["vocab"])
  model.build()
  beam = shapes.BEAM if args.task == "beam" else 1
  search = JaxSearch(model, decode_hparams(
      f"beam_size={beam},alpha={shapes.ALPHA},"
      f"extra_length={s['output_length'] - s['decode_source_length']}"
      + ("" if args.precision == "float32" else
         f",weights={args.precision}")))
  values = [v.value for v in search.variables]
  inputs = shapes.random_ids(np.random.RandomState(1), s["sentences"],
                             s["decode_source_length"], s["vocab"],
                             eos_last=True).astype(np.int32)
  return shapes.timed_steps(
      lambda: jax.block_until_ready(search(inputs, values=values)),
      args.steps)


def main():
  args, s = shapes.worker_args(__doc__, ("beam", "greedy"),
                                 ("float32", "int8", "bfloat16"))

  def run(a):
    seconds = decode(a, s)
    shapes.emit(seconds_per_batch=seconds,
                sentences_per_s=s["sentences"] / seconds)
  shapes.for_each_task(args, run)


if __name__ == "__main__":
  main()
