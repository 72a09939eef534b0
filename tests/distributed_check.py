"""Run by test_distributed.py in a fresh process (the CPU must be split into
logical devices before TensorFlow starts): one update on 2 replicas equals one
update on 1 replica over the same global batch, and the update's figures
stay on the first replica's device (the replicas run on CPU:1 then CPU:0, so
the host's CPU:0 is not the first replica's); validation decoding shared
over the two replicas gives the outputs one device gives, each replica's
search reading its own copy of the weights."""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras
import numpy as np
import tensorflow as tf

import t2t_keras
from t2t_keras import registry
from t2t_keras.training.strategy import make_strategy
from t2t_keras.training.trainer import Trainer

HPARAMS = ("hidden_size=32,filter_size=64,num_hidden_layers=1,"
           "layer_prepostprocess_dropout=0.0,label_smoothing=0.1,"
           "optimizer=sgd,learning_rate=2000.0")


def batch(rng, rows, source_length, target_length, vocab=20):
  inputs = rng.randint(2, vocab, size=(rows, source_length))
  targets = rng.randint(2, vocab, size=(rows, target_length))
  inputs[0, -2:] = 0            # padding at different places
  targets[-1, -3:] = 0
  return {"inputs": inputs.astype("int64"), "targets": targets.astype("int64")}


def pad_concat(parts):
  length = {k: max(p[k].shape[1] for p in parts) for k in parts[0]}
  return {k: np.concatenate([np.pad(p[k], ((0, 0), (0, length[k] - p[k].shape[1])))
                             for p in parts]) for k in parts[0]}


def one_update(strategy, parts):
  hp = registry.hparams("transformer_tiny").parse(HPARAMS)

  def build():
    keras.utils.set_random_seed(7)
    return t2t_keras.build_model(hparams=hp, vocab_size=20)

  trainer = Trainer(build, hp, strategy)
  before = [v.numpy().copy() for v in trainer.model.trainable_variables]
  replicas = strategy.num_replicas_in_sync
  if replicas == 1:
    data = [pad_concat(parts)]
  else:
    data = parts

  def dataset_fn(_):
    ds = None
    for part in data:
      one = tf.data.Dataset.from_tensors(part)
      ds = one if ds is None else ds.concatenate(one)
    return ds

  features = next(iter(trainer.distribute(dataset_fn)))
  outputs = trainer._train_step([features])
  loss, tokens, norm = (float(t) for t in outputs[:3])
  # Where the step's outputs are made (a CPU tensor handle always names the
  # host, so the graph says it): the first op with a device behind each.
  devices = []
  step = trainer._functions["update"]
  for tensor in step.get_concrete_function().structured_outputs:
    op = tensor.op
    while not op.device and op.inputs:
      op = op.inputs[0].op
    devices.append(op.device)
  after = [v.numpy() for v in trainer.model.trainable_variables]
  deltas = [a - b for a, b in zip(after, before)]
  return loss, tokens, norm, deltas, replicas, devices, trainer


class Digits:
  """Ids as text: "3 7 5"."""

  def decode(self, ids):
    return " ".join(str(int(i)) for i in ids if i > 1)


def shared_decoding(trainer, strategy, rng):
  """(outputs decoded over the two replicas == on the default device, the
  devices the two replicas' searches ran on, whether a replica whose copy
  of the weights was changed decodes differently)."""
  from t2t_keras.decoding.options import decode_hparams
  from t2t_keras.decoding.backends.decoder import Decoder
  from t2t_keras.training.dev_bleu import decode_on_devices
  hparams = decode_hparams("beam_size=2,batch_size=3")
  items = [list(rng.randint(2, 20, size=rng.randint(2, 9))) + [1]
           for _ in range(11)]
  sources = [str(i) for i in range(len(items))]
  devices = list(strategy.extended.worker_devices)

  def decoders(n):
    return [Decoder(trainer.model, Digits(), hparams) for _ in range(n)]
  shared, _ = decode_on_devices(decoders(2), devices, strategy, items,
                                sources)
  alone, _ = decode_on_devices(decoders(1), [None], None, items, sources)
  ran_on = []
  for decoder, device in zip(decoders(2), devices):
    with strategy.scope(), tf.device(device):
      ran_on.append(decoder._search(tf.constant([[3, 4, 1]], tf.int32))[0]
                    .device)
  # The second replica's copy of the output bias changed: only the lines
  # that replica decodes change.
  kernel = trainer.model.trainable_variables[-1]
  copies = strategy.experimental_local_results(getattr(kernel, "value",
                                                       kernel))
  copies[1].assign(copies[1] + 100.0 * rng.randn(*copies[1].shape))
  changed, _ = decode_on_devices(decoders(2), devices, strategy, items,
                                 sources)
  second = [i for i, (a, b) in enumerate(zip(shared, changed)) if a != b]
  return shared == alone, ran_on, second


def main():
  rng = np.random.RandomState(0)
  parts = [batch(rng, 3, 5, 6), batch(rng, 2, 7, 4)]
  make_strategy(cpu_devices=2)   # splits the CPU into two devices
  two = one_update(tf.distribute.MirroredStrategy(["/cpu:1", "/cpu:0"]),
                   parts)
  shared = shared_decoding(two[6], two[6].strategy, rng)
  one = one_update(tf.distribute.get_strategy(), parts)
  assert two[1] == one[1], (two[1], one[1])            # same token count
  # Relative to the largest update anywhere: variables whose true gradient
  # is 0 (attention key biases: softmax ignores a constant added to every
  # key's logit) get updates of rounding noise, ~1e-11, on either side.
  scale = max(float(np.max(np.abs(b))) for b in one[3])
  worst = max(float(np.max(np.abs(a - b))) for a, b in zip(two[3], one[3]))
  worst /= scale
  print(json.dumps({"loss": [two[0], one[0]], "tokens": [two[1], one[1]],
                    "norm": [two[2], one[2]], "worst_relative_delta": worst,
                    "update_scale": scale,
                    # Measured: the strategies' replicas as they ran.
                    "replicas": [two[4], one[4]],
                    "devices": two[5],
                    "shared_equals_one": shared[0],
                    "decoded_on": shared[1], "changed_lines": shared[2]}))


if __name__ == "__main__":
  main()
