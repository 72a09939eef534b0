"""Training under tf.distribute, gradient accumulation, averaging, NaN stops,
mixed precision and summaries."""

import glob
import json
import os
import re
import signal
import socket
import subprocess
import time
import types

import numpy as np
import pytest
import tensorflow as tf

from commands import python
import t2t_keras
from t2t_keras import registry
from t2t_keras.training.average import average_checkpoints
from t2t_keras.training.hooks import ProgressHook
from t2t_keras.models.precision import dtype_policy
from t2t_keras.training.run import CheckpointPolicy, RunConfig, train
from t2t_keras.training.loss_check import NonFiniteLossError
from t2t_keras.training.trainer import Trainer

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SGD = ("hidden_size=32,filter_size=64,layer_prepostprocess_dropout=0.0,"
       "optimizer=sgd,learning_rate=2000.0")
# The clusters' model: one layer (a trace of it costs about two thirds of
# two layers'; the workers' agreement is the point, not the depth).
CLUSTER = ("hidden_size=32,filter_size=64,num_hidden_layers=1,"
           "batch_size=320,max_length=16")
# Two replicas on each worker: logical CPUs (kernels/distribute.py's
# stand-in for GPUs).
TWO = "--cpu_devices=2"


def test_two_replicas_equal_one_replica_on_the_same_global_batch():
  # Through the prefork server: TensorFlow is imported there but has run
  # no op, so the check can still split the CPU into logical devices.
  result = subprocess.run(
      python(os.path.join(HERE, "distributed_check.py")),
      capture_output=True, text=True,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), timeout=600,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  report = json.loads(result.stdout.strip().splitlines()[-1])
  print(report)
  assert report["replicas"] == [2, 1]
  # Loss, tokens, norm and votes stay on the first replica (CPU:1): the
  # host does not wait for them at every update.
  assert all(d.endswith("/device:CPU:1") for d in report["devices"]), report
  assert report["tokens"][0] == report["tokens"][1]
  assert report["loss"][0] == pytest.approx(report["loss"][1], rel=1e-6)
  assert report["norm"][0] == pytest.approx(report["norm"][1], rel=1e-5)
  # Float32 sums in a different order: within 1e-4 of the largest update.
  assert report["worst_relative_delta"] < 1e-4
  # Validation decoding shared over the replicas: each decodes every
  # second line on its own device, from its own copy of the weights.
  assert report["shared_equals_one"]
  assert [d[-5:] for d in report["decoded_on"]] == ["CPU:1", "CPU:0"]
  changed = report["changed_lines"]
  assert changed and all(i % 2 == 1 for i in changed), changed


@pytest.mark.parametrize("kernels", ["0", "1"])
def test_replicas_draw_different_dropout_masks(kernels):
  """Two logical CPUs, Dropout(0.5) in strategy.run: the replicas' masks
  differ at every call, on the fast path and the plain one GPUs run."""
  result = subprocess.run(
      python(os.path.join(HERE, "replica_dropout_check.py")),
      capture_output=True, text=True, timeout=600, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
               T2T_KERAS_KERNELS=kernels))
  assert result.returncode == 0, result.stderr[-3000:]
  report = json.loads(result.stdout.strip().splitlines()[-1])
  assert report["replicas"] == 2 and report["kernels"] == (kernels == "1")
  assert report["differ"] == [True, True, True], report
  for pair in report["kept"]:       # each still drops about half
    assert all(0.35 < share < 0.65 for share in pair), report


def micro_batches(rng):
  shapes = [(3, 5, 6), (2, 7, 4), (4, 3, 3), (1, 9, 8)]
  batches = []
  for rows, source, target in shapes:
    inputs = rng.randint(2, 20, size=(rows, source)).astype("int64")
    targets = rng.randint(2, 20, size=(rows, target)).astype("int64")
    targets[0, -1] = 0
    batches.append({"inputs": inputs, "targets": targets})
  return batches


def concat(parts):
  length = {k: max(p[k].shape[1] for p in parts) for k in parts[0]}
  return {k: np.concatenate([np.pad(p[k], ((0, 0), (0, length[k] - p[k].shape[1])))
                             for p in parts]) for k in parts[0]}


def sgd_trainer(overrides=""):
  hp = registry.hparams("transformer_tiny").parse(SGD).parse(overrides)

  def build():
    import keras
    keras.utils.set_random_seed(7)
    return t2t_keras.build_model(hparams=hp, vocab_size=20)

  return Trainer(build, hp)


def updates(trainer, micro):
  before = [v.numpy().copy() for v in trainer.model.trainable_variables]
  loss, tokens, norm = trainer.train_step(micro)
  deltas = [v.numpy() - b for v, b in
            zip(trainer.model.trainable_variables, before)]
  return loss, tokens, norm, deltas


def test_accumulating_4_micro_batches_equals_one_4x_batch():
  micro = micro_batches(np.random.RandomState(0))
  accumulated = updates(sgd_trainer("gradient_accumulation_steps=4"), micro)
  whole = updates(sgd_trainer(), [concat(micro)])
  assert accumulated[1] == whole[1]
  assert accumulated[0] == pytest.approx(whole[0], rel=1e-6)
  assert accumulated[2] == pytest.approx(whole[2], rel=1e-5)
  scale = max(float(np.abs(d).max()) for d in whole[3])
  worst = max(float(np.abs(a - b).max()) for a, b in
              zip(accumulated[3], whole[3]))
  assert worst / scale < 1e-4
  # The mean of per-micro-batch means would be a different gradient (one
  # trainer, its weights put back before each batch: one trace, not four).
  single = sgd_trainer()
  start = [v.numpy().copy() for v in single.model.trainable_variables]
  per_batch = []
  for m in micro:
    for v, value in zip(single.model.trainable_variables, start):
      v.assign(value)
    per_batch.append(updates(single, [m])[2])
  assert abs(np.mean(per_batch) - whole[2]) > 1e-3


def test_wrong_number_of_micro_batches_is_an_error():
  trainer = sgd_trainer("gradient_accumulation_steps=2")
  with pytest.raises(ValueError, match="expected 2 micro-batches, got 1"):
    trainer.train_step(micro_batches(np.random.RandomState(1))[:1])


def run_copy(output_dir, steps, overrides="", every_steps=None, **config):
  logs = []
  metrics = train(RunConfig(
      "copy_sequence", "transformer_tiny", output_dir, train_steps=steps,
      hparams_overrides="hidden_size=32,filter_size=64,num_hidden_layers=1,"
      "batch_size=320,max_length=16" + overrides,
      checkpoints=CheckpointPolicy(every_steps=every_steps), **config),
                  log=logs.append)
  return metrics, logs


def test_average_of_3_checkpoints_is_the_elementwise_mean(tmp_path):
  model_dir = str(tmp_path / "run")
  run_copy(model_dir, 6, every_steps=2)
  path = average_checkpoints(model_dir, n=3, log=lambda _: None)
  assert os.path.basename(path) == "ckpt-6"
  from t2t_keras.models.builder import build_model_from_dir

  def weights(directory, checkpoint):
    model, _, _ = build_model_from_dir(directory)
    tf.train.Checkpoint(model=model).restore(
        os.path.join(directory, checkpoint)).assert_nontrivial_match()
    return [v.numpy() for v in model.weights]

  sources = [weights(model_dir, f"ckpt-{s}") for s in (2, 4, 6)]
  averaged = weights(os.path.dirname(path), "ckpt-6")
  assert len(averaged) > 20
  assert not np.allclose(sources[0][0], sources[2][0])   # they did change
  for i, value in enumerate(averaged):
    mean = np.mean([s[i] for s in sources], axis=0)
    np.testing.assert_allclose(value, mean, rtol=1e-6, atol=1e-7)
  # --last_step: the last 2 at or before step 5 are ckpt-2 and ckpt-4.
  path = average_checkpoints(model_dir, str(tmp_path / "avg5"), n=2,
                             log=lambda _: None, last_step=5)
  assert os.path.basename(path) == "ckpt-4"
  averaged = weights(os.path.dirname(path), "ckpt-4")
  for i, value in enumerate(averaged):
    mean = np.mean([s[i] for s in sources[:2]], axis=0)
    np.testing.assert_allclose(value, mean, rtol=1e-6, atol=1e-7)


def test_non_finite_loss_stops_and_keeps_last_good_checkpoint(tmp_path):
  model_dir = str(tmp_path / "run")
  with pytest.raises(NonFiniteLossError) as info:
    run_copy(model_dir, 50, ",optimizer=sgd,learning_rate=1e12,"
             "learning_rate_warmup_steps=1", every_steps=1)
  message = str(info.value)
  assert "the training loss became" in message and (
      "is kept" in message or "starts over" in message), message
  # The loss of step k is computed at the weights saved after step k - 1:
  # that checkpoint is moved aside, never called good.
  stopped = int(message.split(" at step ")[1].split(";")[0])
  latest = tf.train.latest_checkpoint(model_dir)
  assert latest is None or int(latest.rsplit("-", 1)[1]) < stopped - 1, (
      message, latest)
  if latest is None:
    return
  reader = tf.train.load_checkpoint(latest)
  for key in reader.get_variable_to_shape_map():
    if key.startswith("model/") and key.endswith("VARIABLE_VALUE"):
      assert np.isfinite(reader.get_tensor(key)).all(), key


def _trained_seconds(model_dir):
  return float(tf.train.load_variable(
      tf.train.latest_checkpoint(model_dir),
      "time_limit/seconds/.ATTRIBUTES/VARIABLE_VALUE"))


def test_time_limit_stops_evaluates_and_resumes(tmp_path):
  model_dir = str(tmp_path / "run")
  # 6 ms: the first update (it traces the step) takes longer.
  metrics, logs = run_copy(model_dir, 50, train_minutes=0.0001)
  assert any(l.startswith("stopping at step 1: ") and
             "reached the time limit of 0.0001 min" in l for l in logs), logs
  assert any(l.startswith("step 1: dev loss") for l in logs), logs
  assert metrics is not None and metrics["loss"] > 0
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-1")
  first = _trained_seconds(model_dir)
  assert first > 0.0001 * 60
  # The same command again: the limit was reached, nothing more is done.
  _, logs = run_copy(model_dir, 50, train_minutes=0.0001)
  assert any("the time limit of 0.0001 min was reached before, at step 1"
             in l for l in logs), logs
  assert not any(l.startswith("step 1: dev loss") for l in logs), logs
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-1")
  # A larger limit goes on, and the time is counted over both runs.
  _, logs = run_copy(model_dir, 3, train_minutes=60)
  assert any(l.startswith("step 3: dev loss") for l in logs), logs
  assert not any("stopping at step" in l for l in logs), logs
  assert _trained_seconds(model_dir) > first


def test_progress_eta_is_bounded_by_the_time_left():
  lines = []
  hook = ProgressHook(every=1, total_steps=10**6, log=lines.append)
  trainer = types.SimpleNamespace(seconds_left=30.4)
  hook.begin(trainer, False)
  time.sleep(0.01)           # by steps alone: about 10,000 s left
  hook.after_update(trainer, 1, {"loss": 1.0, "tokens": 10.0})
  assert lines[-1].endswith("ETA 0:00:30"), lines


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mixed_precision_steps(tmp_path, dtype):
  metrics, logs = run_copy(str(tmp_path / dtype), 3,
                           f",activation_dtype={dtype}")
  assert f"{dtype} activations" in logs[0]
  assert np.isfinite(metrics["loss"])
  import keras
  assert keras.config.dtype_policy().name == "float32"   # restored
  with dtype_policy(dtype):
    model = t2t_keras.build_model("transformer_tiny", vocab_size=12,
                                  hparams_overrides="hidden_size=32")
    logits = model({"inputs": np.ones((1, 3), "int32"),
                    "targets": np.ones((1, 2), "int32")})
  assert logits.dtype == "float32"


def test_xla_compiled_steps(tmp_path):
  # One dev batch: XLA compiles a step for each batch shape it meets.
  metrics, logs = run_copy(str(tmp_path / "xla"), 2, jit_compile=True,
                           eval_steps=1)
  assert "step 2: dev loss" in logs[-1] and np.isfinite(metrics["loss"])


def test_summaries_for_tensorboard(tmp_path):
  model_dir = str(tmp_path / "run")
  run_copy(model_dir, 4, eval_every=2)
  tags = {"train": set(), "eval": set()}
  for kind in tags:
    for path in glob.glob(os.path.join(model_dir, kind, "events.*")):
      for event in tf.compat.v1.train.summary_iterator(path):
        tags[kind].update(v.tag for v in event.summary.value)
  assert {"loss", "learning_rate", "gradient_norm",
          "tokens_per_sec"} <= tags["train"]
  assert {"loss", "perplexity", "accuracy"} <= tags["eval"]


def free_port():
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def start_workers(out, tasks, steps, *extra, own=None):
  """t2t-trainer processes for a cluster on 127.0.0.1 with ``tasks`` (e.g.
  [("chief", 0), ("worker", 0)]), each training copy_sequence into ``out``
  (a folder, or a list: one for each task); ``own``: {place: [flags]}
  given to that task alone, after the others (the last of a flag given
  twice counts)."""
  outs = [out] * len(tasks) if isinstance(out, str) else list(out)
  ports = iter([free_port() for _ in tasks])
  cluster = {}
  for kind, _ in tasks:
    cluster.setdefault(kind, []).append(f"127.0.0.1:{next(ports)}")
  processes = []
  for place, ((kind, index), out) in enumerate(zip(tasks, outs)):
    # Through the prefork server (tests/prefork.py): killing a process
    # kills the trainer it runs; a signal sent to it reaches the trainer.
    worker_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    worker_env["TF_CONFIG"] = json.dumps(
        {"cluster": cluster, "task": {"type": kind, "index": index}})
    processes.append(subprocess.Popen(
        python("-m", "t2t_keras.bin.t2t_trainer", "--problem=copy_sequence",
               "--hparams_set=transformer_tiny",
               f"--hparams={CLUSTER}", f"--train_steps={steps}",
               "--eval_steps=2",
               f"--output_dir={out}", *extra, *(own or {}).get(place, ())),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        env=worker_env))
  return processes


def assert_same_end(outputs, step):
  """Every worker says it ended at ``step`` with the chief's state, and
  all name the same fingerprint."""
  said = set()
  for _, stdout, _ in outputs:
    lines = [l for l in stdout.splitlines() if l.startswith("every worker ")]
    assert len(lines) == 1 and f"ended at step {step:,} with the chief's" \
        in lines[0], stdout[-2000:]
    said.add(lines[0])
  assert len(said) == 1, said


def finish(processes, timeout=400):
  """[(exit code, stdout, stderr)] of each process, killing all on a
  time-out."""
  outputs = []
  for process in processes:
    try:
      stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
      for p in processes:
        p.kill()
      raise
    outputs.append((process.returncode, stdout, stderr))
  return outputs


def test_a_killed_worker_stops_the_other_in_one_line_and_both_resume(
    tmp_path):
  """SIGKILL the worker mid-run: the chief ends within 120 s with one line
  naming it; both started again resume from the same step and end with
  identical weights."""
  out = str(tmp_path / "run")
  tasks = [("chief", 0), ("worker", 0)]
  processes = start_workers(out, tasks, 100000, "--save_checkpoints_steps=5",
                            "--save_checkpoints_secs=0")
  deadline = time.time() + 300
  while time.time() < deadline and not tf.train.latest_checkpoint(out):
    assert processes[0].poll() is None, processes[0].communicate()[1][-3000:]
    time.sleep(0.1)
  processes[1].kill()
  killed = time.time()
  (code, _, stderr), _ = finish(processes, timeout=300)
  assert time.time() - killed < 120
  assert code == 2, stderr[-3000:]
  lines = stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith(
      "error: worker 0 of the 2 workers stopped answering at step "), lines
  latest = tf.train.latest_checkpoint(out)
  assert "all resume from " + latest in lines[0]
  assert "--worker_timeout_secs allows longer" in lines[0]
  step = int(latest.rsplit("-", 1)[1])
  outputs = finish(start_workers(out, tasks, step + 4, "--noeval_bleu"))
  for code, stdout, stderr in outputs:
    assert code == 0, stderr[-3000:]
    assert f"resumed from {latest} at step {step}" in stdout, stdout
    assert f"continuing the training data from its position at step {step}" \
        in stdout, stdout
  assert_same_end(outputs, step + 4)


def test_a_signal_to_one_worker_stops_both_and_a_worker_without_the_folder(
    tmp_path):
  """Two workers of two replicas each (``--cpu_devices=2``: the vote is
  averaged over a worker's replicas) saving by the clock (a shared
  decision): SIGTERM to the worker only stops both within 90 s, each with
  one line, the step they stopped at saved in the run's folder. Started again with the worker on
  another --output_dir (no shared folder), it takes the chief's state over
  the network: both resume from that step and train the same weights."""
  out = str(tmp_path / "run")
  tasks = [("chief", 0), ("worker", 0)]
  # Four micro-batches an update: the stop still comes at an update's end.
  accumulated = f"--hparams={CLUSTER},gradient_accumulation_steps=4"
  processes = start_workers(out, tasks, 100000, TWO,
                            "--save_checkpoints_secs=2",
                            "--save_checkpoints_steps=100000",
                            "--train_minutes=600", accumulated)
  deadline = time.time() + 300
  while time.time() < deadline and not tf.train.latest_checkpoint(out):
    assert processes[0].poll() is None, processes[0].communicate()[1][-3000:]
    time.sleep(0.1)
  processes[1].send_signal(signal.SIGTERM)
  signalled = time.time()
  outputs = finish(processes, timeout=300)
  assert time.time() - signalled < 90
  latest = tf.train.latest_checkpoint(out)
  step = int(latest.rsplit("-", 1)[1])
  for code, _, stderr in outputs:
    lines = stderr.strip().splitlines()
    assert code == 128 + signal.SIGTERM and len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: stopped ") and \
        f"at step {step}" in lines[0], lines
  assert "by SIGTERM" in outputs[1][2] and "with the other workers" in \
      outputs[0][2]
  took = re.search(r" ([\d.]+) s after the signal, which came during "
                   r"update ([\d,]+);", outputs[1][2])
  # Stopped at the end of the update after the one the signal came in.
  assert took and float(took.group(1)) < 60, outputs[1][2]
  assert step <= int(took.group(2).replace(",", "")) + 1, outputs[1][2]
  # The worker also asks for another precision: it takes the chief's.
  elsewhere = str(tmp_path / "elsewhere")
  outputs = finish(start_workers(
      [out, elsewhere], tasks, step + 4, TWO, "--noeval_bleu", accumulated,
      own={1: [accumulated + ",activation_dtype=bfloat16"]}))
  for code, stdout, stderr in outputs:
    assert code == 0, stderr[-3000:]
    assert "worker 1 of the 2 did not restore the chief's state (step " \
        f"{step:,}" in stdout, stdout
    assert "float32 activations" in stdout, stdout
  assert "activation_dtype: float32, the chief's (this worker chose " \
      "bfloat16)" in outputs[1][1]
  # Its data: a new order at once, not a re-read of the chief's batches.
  assert f"the chief's checkpoint (step {step:,}) came from the chief over " \
      "the network: the training data starts a new order" in outputs[1][1]
  assert f"resumed from {latest} at step {step}" in outputs[0][1]
  assert_same_end(outputs, step + 4)
  assert not os.path.exists(os.path.join(elsewhere, "workertemp_1"))
  # The two workers' run resumed on one machine: a new data order at once.
  logs = []
  train(RunConfig("copy_sequence", "transformer_tiny", out,
                  train_steps=step + 6, eval_steps=2, eval_bleu=False,
                  hparams_overrides=CLUSTER + ",gradient_accumulation_steps=4"),
        log=logs.append)
  assert any(f"ckpt-{step + 4} was saved by 2 input pipeline(s) and this "
             "run has 1" in line and "new order" in line for line in logs), \
      logs
  assert tf.train.latest_checkpoint(out).endswith(f"ckpt-{step + 6}")


CUINIT = ("failed call to cuInit: INTERNAL: CUDA error: Failed call to "
          "cuInit: UNKNOWN ERROR (303)")


@pytest.mark.parametrize("asked,seen,cuda,allow,said,expected", [
    (None, 0, False, False, (), None),
    (2, 2, True, False, (), None),
    (2, 8, True, False, (), None),
    (2, 1, True, True, (CUINIT,), None),
    (2, 1, True, False, (), "--worker_gpu=2: TensorFlow sees 1 GPU(s) (this "
     "TensorFlow is built with CUDA); --allow_cpu trains on what it sees"),
    (2, 0, True, False, (CUINIT, "another"), "--worker_gpu=2: TensorFlow "
     "sees 0 GPU(s) (this TensorFlow is built with CUDA); TensorFlow said: "
     f"{CUINIT}; --allow_cpu trains on what it sees"),
    (8, 0, False, False, (), "--worker_gpu=8: TensorFlow sees 0 GPU(s) (this "
     "TensorFlow is not built with CUDA: pip install tensorflow[and-cuda]); "
     "--allow_cpu trains on what it sees"),
])
def test_gpus_asked_for_and_not_seen_are_one_line(asked, seen, cuda, allow,
                                                  said, expected):
  from t2t_keras.errors import UserError
  from t2t_keras.training.strategy import check_gpus
  if expected is None:
    check_gpus(asked, seen, cuda, allow, said)
    return
  with pytest.raises(UserError) as raised:
    check_gpus(asked, seen, cuda, allow, said)
  assert str(raised.value) == expected


def test_worker_gpu_on_a_cpu_only_machine_stops_before_writing(tmp_path):
  """t2t-trainer --worker_gpu=2 where TensorFlow sees no GPU: one line
  naming what was asked and what it sees, exit 2, nothing written."""
  from commands import t2t_command
  out = tmp_path / "run"
  done = t2t_command("t2t_trainer", "--problem=copy_sequence",
                     "--hparams_set=transformer_tiny", f"--output_dir={out}",
                     "--worker_gpu=2", "--train_steps=1")
  assert done.returncode == 2, done.stderr[-2000:]
  assert done.stderr.strip().splitlines() == [
      "error: --worker_gpu=2: TensorFlow sees 0 GPU(s) (this TensorFlow is "
      f"{'built with CUDA' if tf.test.is_built_with_cuda() else 'not built with CUDA: pip install tensorflow[and-cuda]'}"
      "); --allow_cpu trains on what it sees"], done.stderr[-2000:]
  assert not out.exists()


def test_votes_are_any_or_mean_and_acted_on_at_their_step():
  """training.cluster on one replica: a ballot in order, the summed ballot
  taken as the decision after one update (at that step only), and the
  blocking collectives' answers."""
  from t2t_keras.training.cluster import ANY, MEAN, Cluster
  cluster = Cluster(tf.distribute.get_strategy())
  assert (cluster.workers, cluster.rank, cluster.chief) == (1, 0, True)
  cluster.ballot("stop", ANY)
  cluster.ballot("seconds", MEAN)
  cluster.ballot("stop", ANY)          # once
  cluster.vote("seconds", 12.5)
  assert cluster.votes().tolist() == [0.0, 12.5]
  assert cluster.decision("stop", 10) is None
  cluster.agree(np.array([1.0, 30.0], np.float32), 10)
  assert cluster.decision("stop", 10) is True
  assert cluster.decision("seconds", 10) == 30.0
  assert cluster.decision("stop", 11) is None
  assert cluster.agreed("stop") is True
  assert cluster.mean(3.0) == 3.0
  np.testing.assert_array_equal(cluster.gather([1.0, 2.0]), [[1.0, 2.0]])
  assert cluster.from_chief([4.0]).tolist() == [4.0]
  with pytest.raises(ValueError, match="a vote is"):
    cluster.ballot("odd", "max")


def test_worker_timeout_shares_out_over_the_health_checks():
  """--worker_timeout_secs sets how long each of TensorFlow's health
  checks of the other workers waits, so that their tries together take
  about that long (TensorFlow's own: 3 tries of 10 s)."""
  from t2t_keras.kernels.distribute import health_check_timeout
  strategy = types.SimpleNamespace(extended=types.SimpleNamespace(
      _check_health_retry_limit=3, _check_health_timeout=10))
  health_check_timeout(strategy, 30)
  assert strategy.extended._check_health_timeout == 10
  health_check_timeout(strategy, 300)
  assert strategy.extended._check_health_timeout == 100
  # The attributes this reads are TensorFlow's, as its strategy has them.
  from tensorflow.python.distribute import collective_all_reduce_strategy as c
  assert c.CollectiveAllReduceExtended._check_health_retry_limit == 3
  assert c.CollectiveAllReduceExtended._check_health_timeout == 10


def test_a_chief_that_refuses_to_start_stops_the_other_in_one_line(
    tmp_path):
  """The chief refuses its run folder (model.json names another model)
  before any update; the other worker, waiting in the collectives that
  set the run up, ends with one line naming the chief, not a
  traceback."""
  chief_out, worker_out = tmp_path / "chief", tmp_path / "worker"
  chief_out.mkdir()
  (chief_out / "model.json").write_text(json.dumps(
      {"model": "transformer_rotary", "input_vocab_size": 1,
       "target_vocab_size": 1}), encoding="utf-8")
  tasks = [("chief", 0), ("worker", 0)]
  processes = start_workers([str(chief_out), str(worker_out)], tasks, 10,
                            "--worker_timeout_secs=10")
  (chief_code, _, chief_err), (code, _, stderr) = finish(processes,
                                                         timeout=300)
  assert chief_code == 2 and "records another model" in chief_err, \
      chief_err[-2000:]
  assert code == 2, stderr[-3000:]
  lines = stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: ") and \
      "of the 2 workers stopped answering before training began (a " \
      "refusal there says why)" in lines[0], lines


def test_two_workers_stop_together_on_a_nan_and_on_the_time_limit(tmp_path):
  """Stops decided per run, not per worker: a non-finite loss (the
  all-reduced one, over two replicas a worker) ends both workers at the
  same step, each with one line; the time limit (its seconds voted on the
  updates' all-reduce) stops both after the same update."""
  tasks = [("chief", 0), ("worker", 0)]
  outputs = finish(start_workers(
      str(tmp_path / "nan"), tasks, 50, TWO, "--save_checkpoints_steps=1",
      f"--hparams={CLUSTER},learning_rate_schedule=constant,"
      "learning_rate=1e30"))
  steps = set()
  for code, _, stderr in outputs:
    assert code == 2, stderr[-3000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "the training loss became" in lines[0], lines
    steps.add(lines[0].split(" at step ")[1].split(";")[0])
  assert len(steps) == 1, steps
  outputs = finish(start_workers(str(tmp_path / "clock"), tasks, 100000,
                                 "--train_minutes=0.03"))
  stopped = set()
  for code, stdout, stderr in outputs:
    assert code == 0, stderr[-3000:]
    said = [l for l in stdout.splitlines() if "reached the time limit" in l]
    assert len(said) == 1, stdout[-2000:]
    stopped.add(said[0].split(":")[0])      # "stopping at step N"
  assert len(stopped) == 1, stopped
