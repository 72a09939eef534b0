"""decoding.backends.device_batch: batch_size=0 (the default) is 32 sentences on a
CPU and what fills half a GPU's memory with one."""

import tensorflow as tf

from t2t_keras import registry
from t2t_keras.decoding.backends import device_batch
from t2t_keras.decoding.options import decode_hparams

VOCAB = 50


def _model():
  hparams = registry.hparams("transformer_tiny")
  hparams.parse("num_hidden_layers=2,hidden_size=32,filter_size=64,"
                "num_heads=4")
  tf.keras.utils.set_random_seed(1)
  model = registry.lookup("model", "transformer")(hparams, VOCAB)
  model.build()
  return model


def test_one_sentence_is_its_hypotheses_caches_and_vocabulary_rows():
  model = _model()
  hparams = decode_hparams("beam_size=2,extra_length=5")
  per_hypothesis = (2 * 2 * 15 * 32 * 4      # self-attention keys, values
                    + 2 * 2 * 10 * 32 * 4    # encoder-decoder keys, values
                    + 10 * 4                 # the source's padding bias
                    + 3 * 4 * VOCAB)         # logits, log-probs, top-k
  assert device_batch.sentence_bytes(model, hparams, 10) == (
      2 * per_hypothesis)


def test_the_batch_fits_the_memory_within_its_bounds():
  model = _model()
  hparams = decode_hparams("beam_size=4,max_input_length=100")
  assert hparams.batch_size == 0
  assert device_batch.decode_batch_size(model, hparams) == 32   # this CPU
  one = device_batch.sentence_bytes(model, hparams, 100)
  assert device_batch.decode_batch_size(model, hparams,
                                        memory=200 * one) == 100
  assert device_batch.decode_batch_size(model, hparams,
                                        memory=10 * one) == 32
  assert device_batch.decode_batch_size(model, hparams,
                                        memory=10 ** 6 * one) == 1024
  given = decode_hparams("batch_size=7")
  assert device_batch.decode_batch_size(model, given, memory=10 ** 12) == 7


def test_gpu_memory_is_the_first_visible_gpus_and_what_is_free_on_it():
  """Stand-ins for TensorFlow and device_lib: with GPUs 0-3 and only 2 and 3
  visible (--worker_gpu, CUDA_VISIBLE_DEVICES), device_lib is asked about
  physical GPU 2 alone, and what TensorFlow holds there already is left."""
  import types
  asked = []
  visible = [types.SimpleNamespace(name=f"/physical_device:GPU:{i}")
             for i in (2, 3)]
  fake_tf = types.SimpleNamespace(
      compat=tf.compat,
      config=types.SimpleNamespace(
          get_visible_devices=lambda kind: visible if kind == "GPU" else [],
          experimental=types.SimpleNamespace(
              get_memory_info=lambda name: {"current": 3 << 30,
                                            "peak": 5 << 30})))

  def list_local_devices(config):
    asked.append(config.gpu_options.visible_device_list)
    return [types.SimpleNamespace(device_type="CPU", memory_limit=1 << 40),
            types.SimpleNamespace(device_type="GPU", memory_limit=70 << 30)]
  fake_lib = types.SimpleNamespace(list_local_devices=list_local_devices)
  assert device_batch.tensorflow_gpu_memory(fake_tf, fake_lib) == 67 << 30
  assert asked == ["2"]
  visible.clear()
  assert device_batch.tensorflow_gpu_memory(fake_tf, fake_lib) is None
