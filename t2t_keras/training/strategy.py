"""Which tf.distribute strategy a run uses.

- TF_CONFIG naming several workers: MultiWorkerMirroredStrategy, its
  all-reduces by NCCL when the workers train on GPUs (TensorFlow picks its
  ring over gRPC unless asked), by the ring on CPUs; with ``cpu_devices``
  and no GPU, each worker runs that many replicas on logical CPUs (the
  stand-in for several GPUs on each of several machines).
- Otherwise MirroredStrategy over the local GPUs (all of them, or the first
  ``worker_gpu``), or over ``cpu_devices`` logical CPUs: the CPU split into
  N devices, so the multi-replica path runs and is tested without GPUs.
- One device and no GPU: the default strategy (no replication).
"""

import json
import os

import tensorflow as tf

from t2t_keras.io import logs
from t2t_keras.kernels import distribute
from t2t_keras.errors import UserError


def split_cpu(num_devices):
  """Splits the CPU into ``num_devices`` logical devices. Must run before
  TensorFlow initializes its devices (before any op runs)."""
  cpus = tf.config.list_physical_devices("CPU")
  try:
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * num_devices)
  except RuntimeError as e:
    existing = len(tf.config.list_logical_devices("CPU"))
    if existing != num_devices:
      raise RuntimeError(
          f"cannot split the CPU into {num_devices} devices: TensorFlow "
          f"already started with {existing}") from e


def _tf_config():
  return json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")


def num_workers():
  """The training processes TF_CONFIG names: its ``chief`` (at most one)
  and ``worker`` entries together, as MultiWorkerMirroredStrategy counts
  them; 0 without TF_CONFIG."""
  cluster = _tf_config().get("cluster", {})
  return len(cluster.get("chief", [])) + len(cluster.get("worker", []))


def worker_index():
  """This process's place among them (tf.distribute's id in the cluster):
  the chief is 0, worker i is i + 1 when there is a chief, else i."""
  config = _tf_config()
  task = config.get("task", {})
  if task.get("type") == "chief":
    return 0
  has_chief = bool(config.get("cluster", {}).get("chief"))
  return int(task.get("index", 0)) + (1 if has_chief else 0)


def check_gpus(worker_gpu, seen, built_with_cuda, allow_cpu=False,
               device_errors=()):
  """A one-line error when ``worker_gpu`` GPUs are asked for and TensorFlow
  sees fewer (``seen``), unless ``allow_cpu``: training on fewer devices
  than asked, or on the CPU, is never silent. ``device_errors``: what
  TensorFlow said at start-up (``logs.native_errors()``); the first is
  quoted, since it says why a GPU could not be used."""
  if not worker_gpu or seen >= worker_gpu or allow_cpu:
    return
  build = ("built with CUDA" if built_with_cuda else
           "not built with CUDA: pip install tensorflow[and-cuda]")
  said = (f"; TensorFlow said: {device_errors[0].strip()}"
          if device_errors else "")
  raise UserError(f"--worker_gpu={worker_gpu}: TensorFlow sees {seen} GPU(s) "
                  f"(this TensorFlow is {build}){said}; --allow_cpu trains "
                  "on what it sees")


def limit_gpus(worker_gpu, config=tf.config):
  """Makes only the first ``worker_gpu`` GPUs visible (all: None; none: 0,
  tensor2tensor's way of asking for the CPU), so that TensorFlow starts
  (and maps the memory of) those alone. Must run before TensorFlow starts
  its devices; ``config``: ``tf.config`` (a test passes a stand-in).
  Returns the GPUs left visible."""
  gpus = config.list_physical_devices("GPU")
  if worker_gpu is not None and len(gpus) > worker_gpu:
    gpus = gpus[:worker_gpu]
    config.set_visible_devices(gpus, "GPU")
  return gpus


def local_devices(strategy):
  """The names of the devices this process's replicas run on (the default
  strategy's one device: the first GPU, else the CPU)."""
  try:
    return list(strategy.extended.worker_devices)
  except RuntimeError:   # the default strategy keeps no list
    gpus = tf.config.get_visible_devices("GPU")
    return ["/device:GPU:0" if gpus else "/device:CPU:0"]


def multi_worker_strategy(gpus, distribute=tf.distribute):
  """MultiWorkerMirroredStrategy whose collectives run over NCCL between
  ``gpus`` (the visible ones), or TensorFlow's ring without GPUs.
  ``distribute``: ``tf.distribute`` (a test passes a stand-in)."""
  implementation = distribute.experimental.CommunicationImplementation
  return distribute.MultiWorkerMirroredStrategy(
      communication_options=distribute.experimental.CommunicationOptions(
          implementation=implementation.NCCL if gpus else
          implementation.RING))


def make_strategy(worker_gpu=None, cpu_devices=None, allow_cpu=False,
                  worker_timeout_secs=30.0):
  """The strategy for this process (see the module docstring); asking for
  more GPUs than TensorFlow sees is ``check_gpus``'s error. Only the GPUs it
  uses are started (``limit_gpus``)."""
  check_gpus(worker_gpu, len(tf.config.list_physical_devices("GPU")),
             tf.test.is_built_with_cuda(), allow_cpu,
             logs.native_errors())
  limit_gpus(worker_gpu)
  if num_workers() > 1:
    gpus = tf.config.get_visible_devices("GPU")
    if cpu_devices and cpu_devices > 1 and not gpus:
      # Several replicas a worker without GPUs: the many-GPU machines'
      # stand-in (kernels.distribute says how).
      split_cpu(cpu_devices)
      with distribute.cpu_replicas_per_worker(cpu_devices):
        strategy = multi_worker_strategy(gpus)
    else:
      strategy = multi_worker_strategy(gpus)
    distribute.health_check_timeout(strategy, worker_timeout_secs)
    return strategy
  gpus = tf.config.get_visible_devices("GPU")
  if gpus:
    count = len(gpus)
    return tf.distribute.MirroredStrategy(
        [f"/gpu:{i}" for i in range(count)]) if count > 1 else \
        tf.distribute.OneDeviceStrategy("/gpu:0")
  if cpu_devices and cpu_devices > 1:
    split_cpu(cpu_devices)
    return tf.distribute.MirroredStrategy(
        [f"/cpu:{i}" for i in range(cpu_devices)])
  return tf.distribute.get_strategy()
