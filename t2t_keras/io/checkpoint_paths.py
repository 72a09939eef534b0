"""A checkpoint's model weights read into a model that is not a TensorFlow
trackable: Keras on JAX (``t2t-decoder`` under ``KERAS_BACKEND=jax``).

``tf.train.Checkpoint`` saves each variable once, under a key named by the
first object path that reached it (often the optimizer's:
``optimizer/_trainable_variables/5/...``). The checkpoint's object graph
(its ``_CHECKPOINTABLE_OBJECT_GRAPH`` tensor) keeps every path, by the
attribute names TensorFlow tracked from the model's Python attributes:
``model/encoder/layer_0/self_attention/_query_dense/_kernel``. Keras builds
the same attributes on every backend, so each path below ``model``,
followed by ``getattr`` (an index into a list), reaches the same weight of
the model built under JAX.

    missing = restore(net, "run/ckpt-3000")   # [] when every weight read
"""

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from t2t_keras.io.checkpoint_io import (READ_ERRORS, UnreadableCheckpoint,
                                     files_of, reason)
from t2t_keras.errors import UserError

GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def weight_paths(reader, root="model"):
  """{attribute path below ``root`` (a tuple of names): checkpoint key} of
  every variable the checkpoint ``reader`` (``tf.train.load_checkpoint``)
  holds under its object ``root``."""
  graph = trackable_object_graph_pb2.TrackableObjectGraph()
  graph.ParseFromString(reader.get_tensor(GRAPH_KEY))
  start = [c.node_id for c in graph.nodes[0].children if c.local_name == root]
  paths, seen = {}, set()
  stack = [(start[0], ())] if start else []
  while stack:
    node_id, path = stack.pop()
    if node_id in seen:
      continue
    seen.add(node_id)
    node = graph.nodes[node_id]
    for attribute in node.attributes:
      if attribute.name == "VARIABLE_VALUE":
        paths[path] = attribute.checkpoint_key
    stack.extend((c.node_id, path + (c.local_name,))
                 for c in reversed(node.children))
  return paths


def _follow(net, path):
  """The object ``path``'s attribute names (list indices) reach from
  ``net``, or None."""
  current = net
  for name in path:
    if isinstance(current, (list, tuple)) and name.isdigit():
      index = int(name)
      current = current[index] if index < len(current) else None
    else:
      current = getattr(current, name, None)
    if current is None:
      return None
  return current


def restore(net, path, root="model"):
  """Assigns the checkpoint ``path``'s ``root`` weights to ``net`` (a built
  Keras model of any backend). Returns the paths of ``net``'s weights it
  held no value for ([]: every one read). A file that does not read is an
  ``UnreadableCheckpoint``; a value of another shape, a ``UserError``."""
  if not files_of(path):
    raise UnreadableCheckpoint(path, "its files are missing")
  try:
    reader = tf.train.load_checkpoint(path)
    values = {}
    for names, key in weight_paths(reader, root).items():
      variable = _follow(net, names)
      if variable is not None and hasattr(variable, "assign"):
        values[id(variable)] = (variable, reader.get_tensor(key))
  except READ_ERRORS as e:
    raise UnreadableCheckpoint(path, reason(e)) from None
  for variable, value in values.values():
    if tuple(value.shape) != tuple(variable.shape):
      raise UserError(f"checkpoint {path} holds {variable.path} as "
                      f"{list(value.shape)}, the model's is "
                      f"{list(variable.shape)}: another model's checkpoint")
    variable.assign(np.asarray(value, variable.dtype))
  return [v.path for v in net.weights if id(v) not in values]
