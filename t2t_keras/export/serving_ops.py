"""Does an exported graph run in TF Serving? Every op type in a SavedModel
(its graph and every function in its library) must be in the op registry of
TF Serving's newest release (2.20: TensorFlow 2.20 and tensorflow-text
2.20), listed in ``tf_serving_ops.txt`` by ``scripts/tf_serving_ops.sh``.
A newer TensorFlow here could otherwise put an op into an export that the
model server cannot load.
"""

import os

from tensorflow.core.protobuf import saved_model_pb2

REGISTRY_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "tf_serving_ops.txt")
SERVING_RELEASE = "TF Serving 2.20"


def serving_ops(path=REGISTRY_FILE):
  """The set of op names the model server registers."""
  with open(path, encoding="utf-8") as f:
    return {line.strip() for line in f
            if line.strip() and not line.startswith("#")}


def graph_ops(saved_model_dir):
  """The set of op types a SavedModel's graphs and functions use."""
  proto = saved_model_pb2.SavedModel()
  with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as f:
    proto.ParseFromString(f.read())
  ops = set()
  for meta_graph in proto.meta_graphs:
    graph = meta_graph.graph_def
    ops.update(node.op for node in graph.node)
    for function in graph.library.function:
      ops.update(node.op for node in function.node_def)
  return ops


def missing_ops(saved_model_dir, registry_path=REGISTRY_FILE):
  """Op types of the SavedModel that TF Serving 2.20 lacks, sorted."""
  return sorted(graph_ops(saved_model_dir) - serving_ops(registry_path))
