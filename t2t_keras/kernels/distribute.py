"""tf.distribute's private attributes, read or set in this one place.

- The trainer all-reduces gradients itself, once: it divides them by the
  global token count and measures their norm. Keras's optimizers would sum
  them over replicas again inside ``apply_gradients``;
  ``no_gradient_all_reduce`` switches that off (tests/test_distributed.py
  fails if it stops holding).
- ``health_check_timeout``: how long MultiWorkerMirroredStrategy's health
  checks wait for a peer.
- ``cpu_replicas_per_worker``: the several-devices-per-machine stand-in.
  Under TF_CONFIG, TensorFlow 2.21's ``CollectiveAllReduceExtended.
  _initialize_local_devices`` gives a worker its GPUs, else one CPU device
  (``num_local_devices = 1``), whatever logical CPUs the process has; it is
  called once, from ``_initialize_multi_worker`` in the strategy's
  constructor, and its answer sizes the collectives (``group_size =
  local devices x workers``) and the replicas. Answering with the logical
  CPUs there gives each worker several replicas, as GPUs would
  (tests/test_many_devices_cluster.py).
"""

import contextlib

from tensorflow.python.distribute import \
    collective_all_reduce_strategy as _collective


def no_gradient_all_reduce(optimizer):
  """Makes ``optimizer`` (and a loss-scale wrapper's inner one) apply
  gradients as given, without summing them over replicas."""
  for opt in (optimizer, getattr(optimizer, "inner_optimizer", None)):
    if opt is not None:
      opt._all_reduce_sum_gradients = list


def health_check_timeout(strategy, seconds):
  """A MultiWorkerMirroredStrategy's peers are taken for gone after about
  ``seconds`` without an answer: its health checks (TensorFlow's: every
  30 s, ``_check_health_retry_limit`` tries of 10 s) each wait a share of
  it. The checks read these attributes at each round."""
  extended = strategy.extended
  tries = max(1, int(getattr(extended, "_check_health_retry_limit", 3)))
  extended._check_health_timeout = max(1.0, seconds / tries)


@contextlib.contextmanager
def cpu_replicas_per_worker(count):
  """While open, a MultiWorkerMirroredStrategy built without GPUs runs one
  replica on each of this worker's first ``count`` logical CPUs
  (``training.strategy.split_cpu`` makes them) instead of one."""
  extended = _collective.CollectiveAllReduceExtended
  plain = extended._initialize_local_devices

  def local_devices(self, cluster_resolver, worker_device):
    devices, kind = plain(self, cluster_resolver, worker_device)
    if kind == "CPU":
      devices = tuple(f"{worker_device}/device:CPU:{i}"
                      for i in range(count))
    return devices, kind

  extended._initialize_local_devices = local_devices
  try:
    yield
  finally:
    extended._initialize_local_devices = plain
