"""Layer specs: how a block or stack is told which sub-layer class to build.

A spec is a JSON-able dict ``{"class_name": <Keras registered name>,
"config": {<extra constructor arguments>}}``, so a layer that takes one keeps
a plain ``get_config``. ``None`` means the block's default class. The class
must be registered with ``keras.saving.register_keras_serializable``, as every
t2t_keras layer is.

    spec = layer_spec(RelativeMultiHeadAttention, max_relative_position=20)
    TransformerEncoder(..., self_attention=spec)
"""

import keras

from t2t_keras.errors import UserError


def layer_spec(layer_class, **config):
  """The spec of ``layer_class`` built with ``config`` added to the
  arguments its block passes (sizes, dropout, dtype, name)."""
  name = keras.saving.get_registered_name(layer_class)
  if keras.saving.get_registered_object(name) is not layer_class:
    raise UserError(f"{layer_class.__name__} is not registered with "
                    "keras.saving.register_keras_serializable")
  return {"class_name": name, "config": dict(config)}


def make_layer(spec, default_class, *args, **kwargs):
  """``default_class(*args, **kwargs)``, or the spec's class with the
  spec's config added."""
  if spec is None:
    return default_class(*args, **kwargs)
  layer_class = keras.saving.get_registered_object(spec["class_name"])
  if layer_class is None:
    raise UserError(f"unknown layer class {spec['class_name']!r} in a layer "
                    "spec; is the module that registers it imported?")
  return layer_class(*args, **kwargs, **spec.get("config", {}))
