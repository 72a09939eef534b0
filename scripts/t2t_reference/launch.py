"""Runs one of tensor2tensor 1.15.7's commands under TensorFlow 2.15.

    python launch.py t2t_trainer|t2t_datagen|t2t_decoder [FLAGS...]
    python launch.py --check

tensor2tensor was written for TensorFlow 1.x; three things make it run here:
graph mode before tensor2tensor is imported (else Keras layers take other
variable names and its beam search fails), `ops.Tensor` and
`ops.IndexedSlices` put back for tf-slim 1.1.0, and the commands run as
modules (the installed scripts call `tf.logging`).
"""
import runpy
import sys

import tensorflow as tf
from tensorflow.python.framework import indexed_slices, ops, tensor

tf.compat.v1.disable_v2_behavior()
if not hasattr(ops, "Tensor"):
    ops.Tensor = tensor.Tensor
if not hasattr(ops, "IndexedSlices"):
    ops.IndexedSlices = indexed_slices.IndexedSlices


def main():
    command = sys.argv[1]
    if command == "--check":
        from tensor2tensor.models import transformer  # noqa: F401
        print("tensor2tensor imports")
        return
    sys.argv = [command] + sys.argv[2:]
    # alter_sys: tf.app.run() finds main() in sys.modules["__main__"].
    runpy.run_module("tensor2tensor.bin." + command, run_name="__main__",
                     alter_sys=True)


if __name__ == "__main__":
    main()
