"""What a many-GPU run meets, on logical CPU devices: float16 with dynamic
loss scaling on two replicas (skipped updates, resume), XLA with two
replicas and its compiled shapes, the devices-and-batch line, which GPUs
are started, and the one-line refusals before TensorFlow starts."""

import importlib.metadata
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from commands import t2t_command
from t2t_keras.buckets import bucket_boundaries
from t2t_keras.training import batch_plan
from t2t_keras.training.strategy import limit_gpus

SMALL = ("hidden_size=32,filter_size=64,num_hidden_layers=1,batch_size=512,"
         "learning_rate_warmup_steps=4")


def train(data, out, steps, hparams="", *flags):
  done = t2t_command(
      "t2t_trainer", "--cpu_devices=2", "--problem=translate_synthetic",
      "--hparams_set=transformer_tiny", f"--hparams={SMALL}{hparams}",
      f"--data_dir={data}", f"--output_dir={out}", f"--train_steps={steps}",
      "--save_checkpoints_steps=10", "--save_checkpoints_secs=0",
      "--local_eval_frequency=10", "--eval_steps=2", "--eval_bleu=false",
      *flags)
  assert done.returncode == 0, done.stderr[-3000:]
  return done.stdout


def checkpoint(out):
  reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(out)))
  return {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()
          if k.startswith(("model/", "rng/", "optimizer/"))}


def test_float16_on_two_cpus_skips_overflowing_updates_and_resumes_exactly(
    trained_run, tmp_path):
  """A first loss scale of 1e9 overflows the float16 gradients: those
  updates are skipped (the scale halves each time) and counted as steps,
  as Keras 2 and TensorFlow 1 counted them (the host never reads the
  optimizer to know the step), and a run stopped at step 20 and resumed
  ends with the weights, optimizer and loss scale of the unbroken one."""
  data, _ = trained_run
  scaled = (",activation_dtype=float16,loss_scale_initial=1e9,"
            "layer_prepostprocess_dropout=0.1")
  first = train(data, tmp_path / "resumed", 20, scaled)
  assert "float16 with dynamic loss scaling" in first
  resumed = train(data, tmp_path / "resumed", 40, scaled)
  assert "continuing the training data from its position at step 20" in \
      resumed
  unbroken = train(data, tmp_path / "unbroken", 40, scaled)
  # Each step is evaluated once, skipped updates counted among them.
  evaluated = re.findall(r"^step (\d+): dev loss ([\d.]+)", unbroken, re.M)
  assert [int(s) for s, _ in evaluated] == [10, 20, 30, 40], unbroken
  losses = [float(l) for _, l in evaluated]
  assert losses[-1] < losses[0] - 0.3, losses
  a, b = checkpoint(tmp_path / "resumed"), checkpoint(tmp_path / "unbroken")
  assert a.keys() == b.keys()
  for name in a:
    np.testing.assert_array_equal(a[name], b[name], err_msg=name)
  scale = [k for k in a if "dynamic_scale" in k]
  iterations = [k for k in a if "inner_optimizer/_iterations" in k]
  counter = [k for k in a if "step_counter" in k]
  assert scale and iterations and counter
  assert a[scale[0]] < 1e9 / 8              # overflowing updates were met
  assert a[iterations[0]] == 40


def test_xla_on_two_cpus_compiles_each_replica_on_bucket_shapes(
    trained_run, tmp_path):
  data, _ = trained_run
  # Few steps: XLA compiles once for each bucket shape a batch comes in.
  out = train(data, tmp_path / "xla", 2, ",max_length=24", "--xla_compile")
  shapes = len(bucket_boundaries(24))
  assert (f"XLA: training batches are padded to their length bucket's "
          f"bound, so the step compiles for at most {shapes} shapes") in out
  assert "each replica's forward and backward pass is compiled" in out
  assert re.search(r"^step 2: dev loss [\d.]+", out, re.M), out


def test_batches_padded_to_bucket_bounds_come_in_one_shape_a_bucket(
    trained_run):
  from t2t_keras import registry
  data, _ = trained_run
  hparams = registry.hparams("transformer_tiny").parse(
      "batch_size=256,max_length=40")
  problem = registry.problem("translate_synthetic").for_data(data)
  allowed = {(max(1, 256 // b), b) for b in bucket_boundaries(40)}
  shapes = set()
  for batch in problem.batches("train", data, hparams, seed=1,
                               pad_to_bounds=True).take(100):
    assert batch["inputs"].shape == batch["targets"].shape
    shapes.add(tuple(batch["inputs"].shape))
  assert shapes <= allowed and len(shapes) > 3, shapes
  unpadded = {tuple(b["inputs"].shape) for b in problem.batches(
      "train", data, hparams, seed=1).take(100)}
  assert not unpadded <= allowed   # padded to the longest example instead
  # Dev (one pass, longer examples kept): lengths are bounds, or multiples
  # of max_length past the last; the same examples, in the same order.
  dev = list(problem.batches("dev", data, hparams, pad_to_bounds=True))
  lengths = {int(b["inputs"].shape[1]) for b in dev}
  assert lengths <= set(bucket_boundaries(40)) | {80, 120, 160}, lengths
  plain = list(problem.batches("dev", data, hparams))
  assert len(plain) == len(dev)
  for a, b in zip(plain, dev):
    for k in ("inputs", "targets"):
      width = a[k].shape[1]
      np.testing.assert_array_equal(a[k], b[k][:, :width])
      assert not np.any(b[k][:, width:])


def test_the_devices_and_batch_line():
  line = batch_plan.describe(
      [f"/job:localhost/replica:0/task:0/device:GPU:{i}" for i in range(8)],
      8, 1, 4096, 1, "float16")
  assert line == (
      "devices: 8 x GPU (8 replica(s)), float16 with dynamic loss scaling; "
      "batch: 4,096 tokens a side per replica (padding included) x 8 "
      "replica(s) x 1 micro-batch(es) = 32,768 an update; the paper's "
      "~25,000 + 25,000 tokens an update take gradient_accumulation_steps=1 "
      "at this batch_size on 8 replica(s) (as set)")
  one = batch_plan.describe(["/device:GPU:0"], 2, 2, 4096, 1, "bfloat16")
  assert "1 x GPU on each of 2 workers (2 replica(s)), bfloat16;" in one
  assert "gradient_accumulation_steps=4 at this batch_size on 2" in one
  assert batch_plan.paper_accumulation(4096, 1) == 7


class _Config:
  """A stand-in for tf.config on a machine with ``n`` GPUs."""

  def __init__(self, n):
    self.gpus = [f"GPU:{i}" for i in range(n)]
    self.visible = None

  def list_physical_devices(self, kind):
    assert kind == "GPU"
    return list(self.gpus)

  def set_visible_devices(self, devices, kind):
    assert kind == "GPU"
    self.visible = list(devices)


@pytest.mark.parametrize("n, asked, visible", [
    (8, 2, ["GPU:0", "GPU:1"]), (8, None, None), (2, 4, None), (0, 1, None),
    (4, 0, [])])
def test_worker_gpu_makes_only_those_gpus_visible(n, asked, visible):
  config = _Config(n)
  kept = limit_gpus(asked, config=config)
  assert config.visible == visible
  assert kept == (visible if visible is not None else config.gpus)


@pytest.mark.parametrize("gpus, implementation", [
    (["GPU:0", "GPU:1"], "NCCL"), ([], "RING")])
def test_workers_all_reduce_over_nccl_between_gpus(gpus, implementation):
  """TensorFlow's MultiWorkerMirroredStrategy picks its ring over gRPC
  unless told: between GPUs it is told NCCL (a stand-in records what the
  strategy is made with)."""
  import types
  import tensorflow as tf
  from t2t_keras.training.strategy import multi_worker_strategy
  made = multi_worker_strategy(gpus, distribute=types.SimpleNamespace(
      experimental=tf.distribute.experimental,
      MultiWorkerMirroredStrategy=lambda **kwargs: kwargs))
  chosen = made["communication_options"].implementation
  assert chosen == getattr(
      tf.distribute.experimental.CommunicationImplementation, implementation)


def test_gpu_memory_growth_is_tensorflows_switch(tmp_path):
  done = t2t_command("t2t_trainer", "--gpu_memory_growth",
                     "--problem=copy_sequence", "--hparams_set=nonesuch",
                     f"--output_dir={tmp_path}")
  assert done.returncode == 2   # the flag parses; the bad name is refused
  from t2t_keras.bin import common
  environ = {}
  common.gpu_environment(True, environ)
  assert environ == {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
  common.gpu_environment(False, environ := {})
  assert environ == {}


def test_keras_backend_jax_with_a_tensorflow_command_is_one_line(tmp_path):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="jax")
  done = t2t_command("t2t_trainer", "--problem=copy_sequence",
                     "--hparams_set=transformer_tiny",
                     f"--output_dir={tmp_path / 'run'}", env=env)
  assert done.returncode == 2
  assert done.stderr.strip().splitlines() == [
      "error: KERAS_BACKEND=jax: the t2t-* commands run on TensorFlow "
      "(t2t-decoder on jax too); unset KERAS_BACKEND (or set it to "
      "tensorflow). The library's layers and models run on JAX from "
      "Python (docs/library.md)"], done.stderr
  assert not (tmp_path / "run").exists()


def test_the_gpu_extra_brings_tensorflow_with_cuda():
  requires = importlib.metadata.requires("t2t_keras") or []
  gpu = [r for r in requires if 'extra == "gpu"' in r]
  assert gpu and all(r.startswith("tensorflow[and-cuda]") for r in gpu), \
      requires
