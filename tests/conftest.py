"""Shared test set-up: quiet TensorFlow, fixed seeds, the shared data path."""

import os

# The suite runs quiet and on TensorFlow whatever the shell exports (the JAX
# checks set KERAS_BACKEND=jax for the processes they start). A shell's
# TF_CPP_MIN_LOG_LEVEL=2 kept would differ from the commands' 3 and send
# every command past the fork server (tests/prefork.py) to a fresh process.
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["KERAS_BACKEND"] = "tensorflow"
if os.environ.get("PYTEST_XDIST_WORKER"):
  # Under pytest -n N each worker (and every command a test starts, which
  # inherits this) runs an op on one thread, so N workers share N cores
  # without spinning thread pools taking turns on the same core. (Inter-op
  # threads stay: replicas' collective ops wait on each other.)
  os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")

import shutil
import subprocess
import sys
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
FETCHED_DATA = os.path.join(os.path.expanduser("~"), ".cache", "t2t_keras",
                            "test_data")


@pytest.fixture(scope="session", autouse=True)
def _prefork_server():
  """This pytest process's prefork server (tests/prefork.py), through which
  the tests' commands start without importing TensorFlow each time; none
  under T2T_TEST_PREFORK=off."""
  from commands import PREFORK
  from prefork import SOCKET_VARIABLE as variable
  if os.environ.get(variable) == "off":
    yield
    return
  folder = tempfile.mkdtemp(prefix="t2t-prefork-")
  path = os.path.join(folder, "socket")
  with open(os.path.join(folder, "server.log"), "w", encoding="utf-8") as log:
    server = subprocess.Popen(
        [sys.executable, PREFORK, "serve", path], stdin=subprocess.DEVNULL,
        stdout=log, stderr=log, cwd=REPO)
  deadline = time.time() + 60   # it listens before its imports
  while not os.path.exists(path) and server.poll() is None and \
      time.time() < deadline:
    time.sleep(0.01)
  os.environ[variable] = path
  yield
  del os.environ[variable]
  server.kill()
  server.wait()
  shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _seed():
  import keras
  keras.utils.set_random_seed(1234)
  yield


def test_data_folder():
  """Where the real-text tests read their public corpora: the folder
  ``T2T_TEST_DATA`` names, else ``../shared/data`` beside the clone (CI's),
  else ``scripts/fetch_test_data.py``'s cache; None when none is there."""
  named = os.environ.get("T2T_TEST_DATA")
  if named:
    return named if os.path.isdir(named) else None
  if os.path.isdir(SHARED_DATA):
    return SHARED_DATA
  # The fetch script marks its cache once every file is there and matches.
  if os.path.isfile(os.path.join(FETCHED_DATA, ".complete")):
    return FETCHED_DATA
  return None


@pytest.fixture(scope="session")
def shared_data():
  """The folder of the public corpora (``test_data_folder``). Absent, a
  real-text test is skipped with one line saying how to get them, or
  fails where ``T2T_REQUIRE_TEST_DATA=1`` (CI: .ci/run sets it)."""
  folder = test_data_folder()
  if folder is None:
    said = (f"no test corpora: {os.environ.get('T2T_TEST_DATA') or SHARED_DATA}"
            " is absent; python scripts/fetch_test_data.py fetches them, or "
            "T2T_TEST_DATA=FOLDER names a copy")
    if os.environ.get("T2T_REQUIRE_TEST_DATA") == "1":
      pytest.fail(said, pytrace=False)
    pytest.skip(said)
  return folder


# The tiny run's shape: trained_run's, and that of the tests that train
# runs like it (one layer: each trace of it costs about two thirds of two
# layers', and the tests trace it hundreds of times).
TINY_RUN = ("hidden_size=64,filter_size=128,num_hidden_layers=1,"
            "batch_size=1024,learning_rate_warmup_steps=40")


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory):
  """(data_dir, output_dir) of a tiny model trained briefly on the
  embedded translate_synthetic problem: its outputs differ between inputs.
  Built once for the whole session, shared by pytest-xdist's workers (the
  first to ask builds it under a lock); tests only read it (those that
  damage a run copy it first)."""
  from t2t_keras.data.datagen import generate
  from t2t_keras.training.run import RunConfig, train

  def build(root):
    data, out = str(root / "data"), str(root / "train")
    generate("translate_synthetic", data, log=lambda _: None)
    # Long enough that outputs differ between inputs (order tests need it).
    train(RunConfig("translate_synthetic", "transformer_tiny", out,
                    data_dir=data, train_steps=120,
                    hparams_overrides=TINY_RUN,
                    eval_bleu=False),   # tests/test_validation.py tests it
          log=lambda _: None)
    return data, out
  return _once_per_session(tmp_path_factory, "trained", build)


WSJ_SAMPLE = os.path.join("ptb", "nltk_treebank_sample", "wsj_0001-0179")


def wsj_sample_data(shared_data, root, problem_name, trees, **options):
  """The data_dir (under ``root``, a pathlib folder) of ``problem_name``
  made from the WSJ sample's first ``trees`` trees, as both train and dev,
  with a 1,000-piece vocabulary; ``options``: the problem's datagen
  options (parsing_wsj's ``order``, ``leaves``, ``close_labels``)."""
  from t2t_keras.data.datagen import generate
  with open(os.path.join(shared_data, WSJ_SAMPLE + ".trees"),
            encoding="utf-8") as f:
    first = [next(f) for _ in range(trees)]
  (root / "sample.trees").write_text("".join(first), encoding="utf-8")
  data = str(root / "data")
  generate(problem_name, data, raw_dir=str(root),
           raw_prefixes="train=sample,dev=sample", vocab_size=1000,
           log=lambda _: None, **options)
  return data


def _once_per_session(tmp_path_factory, name, build):
  """``build(folder)``'s result, built by one pytest process of the
  session: under pytest-xdist, every worker's base temp folder is beside
  the others', and the first worker to take the lock builds in a folder
  there; the rest wait and reuse it. The result must be JSON-able."""
  import fcntl
  import json
  import shutil
  shared = tmp_path_factory.getbasetemp()
  if os.environ.get("PYTEST_XDIST_WORKER"):
    shared = shared.parent
  done = shared / f"{name}.json"
  with open(shared / f"{name}.lock", "w", encoding="utf-8") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not done.exists():
      folder = shared / name
      shutil.rmtree(folder, ignore_errors=True)   # a build that failed
      folder.mkdir()
      done.write_text(json.dumps(build(folder)), encoding="utf-8")
  return tuple(json.loads(done.read_text(encoding="utf-8")))


# The modules that take longest (each over half a minute on 2 cores) go
# first. The suite runs with `pytest -n 2 --dist worksteal`: each worker
# starts on its half of this order and a worker that runs out takes tests
# from the end of the other's queue, so the long ones start early, the short
# ones fill in at the end, and both workers end within seconds of each
# other. (Under xdist's default --dist load, one worker was left with the
# last 3.4 minutes of queued tests while the other sat idle; --dist loadfile
# was slower still.) Only the order changes; a module missing from the list
# runs after.
SLOW_FIRST = ("test_speed_table", "test_recipes", "test_lose_nothing",
              "test_seams", "test_ensemble", "test_alignments", "test_resume",
              "test_faults", "test_cli", "test_distributed", "test_warm_start",
              "test_validation", "test_analysis", "test_export",
              "test_constraints", "test_parsing", "test_decoding_modes",
              "test_ctranslate2")


# The fast tier (`pytest -m fast`, CONTRIBUTING's everyday command): whole
# modules that run in the test process, none over about 30 s on 2 cores,
# covering the layers, the model contract's searches, training steps,
# vocabularies, metrics, ranges and the house's rules.
FAST = ("test_docs", "test_hparams_sets", "test_peak", "test_registry",
        "test_schedule", "test_floors", "test_prefork", "test_lowercase",
        "test_top_k", "test_bpe_dropout", "test_ranges", "test_layers",
        "test_vocab", "test_device_batch", "test_inorder_constraint",
        "test_t2t_subword", "test_modes", "test_mixing", "test_weights_once",
        "test_metrics", "test_inputs", "test_step_kernels", "test_transformer",
        "test_rdrop", "test_guided_alignment", "test_training",
        "test_decoder", "test_beam_search", "test_model_contract",
        "test_write_path")


def pytest_configure(config):
  config.addinivalue_line(
      "markers", "fast: the everyday tier, under 3 minutes on 2 cores")


def _module(item):
  return getattr(item.module, "__name__", "").rsplit(".", 1)[-1]


def pytest_collection_modifyitems(items):
  for item in items:
    if _module(item) in FAST:
      item.add_marker(pytest.mark.fast)

  def rank(item):
    name = _module(item)
    return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)
  items.sort(key=rank)   # stable: tests keep their order within a module
