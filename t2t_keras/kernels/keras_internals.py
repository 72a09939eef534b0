"""Keras's private API, for code above kernels/ that needs what Keras
keeps private (the house rule: private access lives here only,
tests/test_private_api.py holds it). Each function says which attribute
it reads; a Keras release that renames one breaks here alone.
"""


def nested_layers(model):
  """Every layer inside ``model`` (not ``model`` itself), depth first, each
  once: Keras's ``Layer._flatten_layers``."""
  return list(model._flatten_layers(include_self=False))


def adam_moments(optimizer):
  """[(variable, first moment, second moment)] of a built Keras Adam (or a
  subclass), in the optimizer's order of its trainable variables: its
  ``_trainable_variables``, ``_get_variable_index``, ``_momentums`` and
  ``_velocities``."""
  found = []
  for variable in optimizer._trainable_variables:
    index = optimizer._get_variable_index(variable)
    found.append((variable, optimizer._momentums[index],
                  optimizer._velocities[index]))
  return found
