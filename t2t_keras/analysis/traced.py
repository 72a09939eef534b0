"""FLOPs of a traced training step, counted from XLA's HLO: a check of
``cost``'s formulas that does not share their reasoning.

The step is the model's forward pass, the training loss and the gradients
of every weight, compiled by XLA for fixed shapes; every ``dot`` in its HLO
(the matrix products, forward and backward) counts 2 x (output elements) x
(contracted elements).
"""

import math
import re

import numpy as np
import tensorflow as tf

from t2t_keras.training.loss import smoothed_cross_entropy

_DOT = re.compile(
    r"=\s*\w+\[([\d,]*)\][^=]*?\sdot\(\s*\w+\[([\d,]*)\]"
    r".*?lhs_contracting_dims=\{([\d,]*)\}")


def _dims(text):
  return [int(x) for x in text.split(",") if x]


def dot_flops(hlo_text):
  """Sum over the ``dot`` instructions of HLO text of 2 x output elements x
  contracted elements."""
  total = 0
  for line in hlo_text.splitlines():
    match = _DOT.search(line)
    if match:
      out, lhs, contracting = (_dims(g) for g in match.groups())
      total += 2 * math.prod(out) * math.prod(lhs[i] for i in contracting)
  return total


def training_step_hlo(model, sentences, source_length, target_length,
                      label_smoothing=0.1):
  """HLO text of one gradient computation at these shapes."""
  rng = np.random.RandomState(0)
  features = {
      "inputs": tf.constant(rng.randint(
          2, model.input_vocab_size, (sentences, source_length)), tf.int64),
      "targets": tf.constant(rng.randint(
          2, model.target_vocab_size, (sentences, target_length)), tf.int64)}

  @tf.function(jit_compile=True)
  def step(features):
    with tf.GradientTape() as tape:
      logits = model(features, training=True)
      loss, _ = smoothed_cross_entropy(logits, features["targets"],
                                       label_smoothing)
    return loss, tape.gradient(loss, model.trainable_variables)

  return step.experimental_get_compiler_ir(features)(stage="hlo")


def traced_step_flops(model, sentences, source_length, target_length):
  """Matrix-product FLOPs of one training step, from XLA."""
  return dot_flops(training_step_hlo(model, sentences, source_length,
                                     target_length))
