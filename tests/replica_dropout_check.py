"""Run by test_distributed.py in a fresh process (the CPU is split into two
logical devices before TensorFlow starts): ``Dropout(0.5)`` called inside
``strategy.run`` on two replicas, three times. Prints, as JSON, whether the
replicas' masks differ at each call, and whether one replica's masks
repeat the single-device layer's (they should not all: a replica folds its
id into the seed)."""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
import tensorflow as tf

from t2t_keras import kernels
from t2t_keras.layers.dropout import Dropout
from t2t_keras.training.strategy import make_strategy


def main():
  strategy = make_strategy(cpu_devices=2)
  with strategy.scope():
    layer = Dropout(0.5, seed=3)
    layer.build((16, 32))

  @tf.function(autograph=False)
  def masks():
    return strategy.run(lambda: layer(tf.ones([16, 32]), training=True))

  differ, kept = [], []
  for _ in range(3):
    first, second = (m.numpy() != 0 for m in
                     strategy.experimental_local_results(masks()))
    differ.append(bool((first != second).any()))
    kept.append([float(first.mean()), float(second.mean())])
  print(json.dumps({"replicas": strategy.num_replicas_in_sync,
                    "kernels": kernels.enabled(), "differ": differ,
                    "kept": np.round(kept, 3).tolist()}))


if __name__ == "__main__":
  main()
