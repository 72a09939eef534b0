"""The trainer all-reduces gradients itself, once: it divides them by the
global token count and measures their norm. Keras's optimizers would sum
them over replicas again inside ``apply_gradients``; this switches that off
through a private attribute (tests/test_distributed.py fails if it stops
holding)."""


def no_gradient_all_reduce(optimizer):
  """Makes ``optimizer`` (and a loss-scale wrapper's inner one) apply
  gradients as given, without summing them over replicas."""
  for opt in (optimizer, getattr(optimizer, "inner_optimizer", None)):
    if opt is not None:
      opt._all_reduce_sum_gradients = list  # pylint: disable=protected-access
