"""One answer on every worker of a multi-worker run: decisions a worker
would otherwise take by its own clock (when to save, when the time limit
is reached) are all-reduced, so every worker saves the same steps and stops
after the same update."""

import tensorflow as tf


class WorkerAgreement:
  """All-reduces a host number over the replicas of ``strategy`` (one
  scalar collective a call)."""

  def __init__(self, strategy):
    self.strategy = strategy
    self._reduce = {}

  def _reduced(self, op):
    if op not in self._reduce:
      strategy = self.strategy

      @tf.function(autograph=False,
                   input_signature=[tf.TensorSpec([], tf.float32)])
      def reduce(value):
        reduced = strategy.run(lambda: tf.distribute.get_replica_context(
        ).all_reduce(op, tf.identity(value)))
        return strategy.experimental_local_results(reduced)[0]
      self._reduce[op] = reduce
    return self._reduce[op]

  def mean(self, value):
    """The mean of every replica's ``value`` (a float)."""
    return float(self._reduced(tf.distribute.ReduceOp.MEAN)(
        tf.constant(value, tf.float32)))

  def all_reached(self):
    """Returns once every worker has called it: a barrier."""
    self.mean(1.0)

  def any(self, flag):
    """Whether any worker's ``flag`` is true."""
    return self.mean(float(bool(flag))) > 0
