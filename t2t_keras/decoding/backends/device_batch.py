"""The decode batch that fits the device (decode hparam ``batch_size=0``,
the default; Marian's ``--mini-batch-fit``).

On a CPU a batch is ``BATCH_SIZE`` (32) sentences, where beam search's
throughput levels off on 2 cores. With a GPU visible to Keras's backend
(TensorFlow or JAX), the batch is as many sentences as fill
``MEMORY_SHARE`` of its memory at the longest input allowed
(``max_input_length``): per sentence, the model's decoding cache for each
hypothesis (measured, as ``init_cache`` makes it for one sentence) plus
three float32 rows of the vocabulary (logits, log-probabilities, the
top-k's input) per hypothesis; at least ``BATCH_SIZE``, at most
``MAX_SENTENCES``. A positive ``batch_size`` is used as given.
"""

import numpy as np

from t2t_keras.decoding.options import BATCH_SIZE, sentences_a_batch

MEMORY_SHARE = 0.5
MAX_SENTENCES = 1024


def accelerator_memory():
  """Bytes Keras's backend (TensorFlow or JAX) may still use on its first
  visible GPU, or None without one."""
  import keras
  if keras.backend.backend() == "jax":
    import jax
    device = jax.devices()[0]
    if device.platform == "cpu":
      return None
    return (device.memory_stats() or {}).get("bytes_limit")
  import tensorflow as tf
  from tensorflow.python.client import device_lib
  return tensorflow_gpu_memory(tf, device_lib)


def tensorflow_gpu_memory(tf, device_lib):
  """Bytes TensorFlow may still take on its first visible GPU: its
  allocator's limit less what it holds now (the model's weights), or None
  without a visible GPU. Only that GPU is asked about (``device_lib``
  would otherwise start every physical GPU, the ones ``--worker_gpu`` hid
  too). ``tf``, ``device_lib``: TensorFlow's (a test passes stand-ins)."""
  visible = tf.config.get_visible_devices("GPU")
  if not visible:
    return None
  config = tf.compat.v1.ConfigProto()
  config.gpu_options.visible_device_list = visible[0].name.rsplit(":", 1)[1]
  limits = [d.memory_limit for d in device_lib.list_local_devices(config)
            if d.device_type == "GPU"]
  if not limits:
    return None
  used = tf.config.experimental.get_memory_info("GPU:0").get("current", 0)
  return max(int(limits[0]) - int(used), 0)


def sentence_bytes(model, hparams, source_length):
  """Bytes one sentence of ``source_length`` tokens needs while it is
  decoded with ``hparams`` (beam_size, extra_length): its hypotheses'
  cache tensors (those with a row per hypothesis) and vocabulary rows."""
  hypotheses = max(1, int(hparams.beam_size))
  ids = np.ones((1, source_length), np.int32)
  cache = model.init_cache(model.encode(ids),
                           source_length + int(hparams.extra_length))
  import keras
  per_row = sum(int(np.prod(t.shape)) * (  # a numpy (JAX) or a TF dtype
      getattr(t.dtype, "itemsize", None) or t.dtype.size)
                for t in keras.tree.flatten(cache) if len(t.shape) and
                t.shape[0] == 1)
  vocab_rows = 3 * 4 * int(model.target_vocab_size)
  return hypotheses * (per_row + vocab_rows)


def decode_batch_size(model, hparams, memory=None):
  """Sentences a batch for ``model`` decoding with ``hparams``;
  ``memory``: the device's bytes (default: ``accelerator_memory()``)."""
  memory = accelerator_memory() if memory is None else memory
  if hparams.batch_size or not memory:
    return sentences_a_batch(hparams)
  fits = int(MEMORY_SHARE * memory // sentence_bytes(
      model, hparams, int(hparams.max_input_length)))
  return max(BATCH_SIZE, min(MAX_SENTENCES, fits))
