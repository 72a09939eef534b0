"""Optimizers by the hparam ``optimizer``: Adam with the paper's betas and
epsilon (section 5.3), AdamW, and plain SGD; with float16 activations,
wrapped in dynamic loss scaling. A new one is a function ``(hparams,
learning_rate) -> keras optimizer`` registered with
``@registry.register_optimizer("name")``."""

import keras

from t2t_keras import registry
from t2t_keras.kernels.fused_adam import FusedAdam
from t2t_keras.training.schedule import schedule_from_hparams


@registry.register_optimizer("adam")
def adam(hparams, learning_rate):
  """The paper's Adam (beta1 0.9, beta2 0.98, epsilon 1e-9)."""
  return FusedAdam(learning_rate=learning_rate,
                   beta_1=hparams.optimizer_adam_beta1,
                   beta_2=hparams.optimizer_adam_beta2,
                   epsilon=hparams.optimizer_adam_epsilon)


@registry.register_optimizer("adamw")
def adamw(hparams, learning_rate):
  """Adam with decoupled weight decay (Loshchilov and Hutter), the paper's
  betas and epsilon, decay ``optimizer_adamw_weight_decay``."""
  return keras.optimizers.AdamW(
      learning_rate=learning_rate,
      weight_decay=hparams.get("optimizer_adamw_weight_decay", 0.01),
      beta_1=hparams.optimizer_adam_beta1, beta_2=hparams.optimizer_adam_beta2,
      epsilon=hparams.optimizer_adam_epsilon)


@registry.register_optimizer("sgd")
def sgd(hparams, learning_rate):
  """Plain SGD (for ablations and tests, where an update equal to -lr *
  gradient exposes the gradient itself)."""
  del hparams
  return keras.optimizers.SGD(learning_rate=learning_rate)


def optimizer_from_hparams(hparams, train_steps=None):
  """The hparams' optimizer on their learning-rate schedule (decays ending
  at ``train_steps``, the run's, when given)."""
  make = registry.lookup("optimizer", hparams.optimizer)
  optimizer = make(hparams, schedule_from_hparams(hparams, train_steps))
  if hparams.get("activation_dtype") == "float16":
    # float16 gradients underflow without loss scaling; bfloat16 has
    # float32's range and needs none.
    return keras.optimizers.LossScaleOptimizer(
        optimizer, initial_scale=hparams.get("loss_scale_initial", 2.0**15))
  return optimizer


def describe_optimizer(optimizer):
  """The optimizer as built, for the run's first lines: its class and the
  settings the paper names (Adam's betas and epsilon), e.g.
  "FusedAdam(beta_1=0.9, beta_2=0.98, epsilon=1e-09)", and "with dynamic
  loss scaling" when it is wrapped in it."""
  inner = getattr(optimizer, "inner_optimizer", optimizer)
  settings = [f"{name}={getattr(inner, name):g}"
              for name in ("beta_1", "beta_2", "epsilon", "weight_decay")
              if isinstance(getattr(inner, name, None), (int, float))]
  return f"{type(inner).__name__}({', '.join(settings)})" + (
      " with dynamic loss scaling" if inner is not optimizer else "")
