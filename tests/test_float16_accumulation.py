"""float16 with gradient accumulation keeps its scaled gradients in range:
each micro-batch's backward pass is of its mean loss, so accumulating 4
micro-batches skips no more updates (an overflow halves the loss scale and
skips the update) than updating on each micro-batch alone."""

import numpy as np

import t2t_keras
from t2t_keras import registry
from t2t_keras.models.precision import dtype_policy
from t2t_keras.training.trainer import Trainer

HPARAMS = ("hidden_size=32,filter_size=64,num_hidden_layers=1,"
           "activation_dtype=float16,learning_rate_warmup_steps=10")


def _micro_batches(count, rows=64, length=30, vocab=20):
  rng = np.random.RandomState(3)
  return [{"inputs": rng.randint(2, vocab, (rows, length)).astype("int64"),
           "targets": rng.randint(2, vocab, (rows, length)).astype("int64")}
          for _ in range(count)]


def _skipped(accumulation, micro, updates):
  """How many of ``updates`` updates halved the loss scale."""
  hp = registry.hparams("transformer_tiny").parse(HPARAMS).parse(
      f"gradient_accumulation_steps={accumulation}")

  def build():
    import keras
    keras.utils.set_random_seed(7)
    return t2t_keras.build_model(hparams=hp, vocab_size=20)

  with dtype_policy("float16"):
    trainer = Trainer(build, hp)
    scale = trainer.optimizer.dynamic_scale
    skipped, last = 0, float(scale.numpy())
    for k in range(updates):
      trainer.train_step(micro[k * accumulation:(k + 1) * accumulation])
      now = float(scale.numpy())
      skipped += now < last
      last = now
  return skipped


def test_accumulating_skips_no_more_updates_than_one_micro_batch():
  micro = _micro_batches(32)
  alone = _skipped(1, micro, 8)
  accumulated = _skipped(4, micro, 8)
  assert accumulated <= alone, (accumulated, alone)
