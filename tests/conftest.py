"""Shared test set-up: quiet TensorFlow, fixed seeds, the shared data path."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import pytest  # pylint: disable=g-import-not-at-top

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")


@pytest.fixture(autouse=True)
def _seed():
  import keras  # pylint: disable=g-import-not-at-top
  keras.utils.set_random_seed(1234)
  yield


@pytest.fixture(scope="session")
def shared_data():
  """The path of ../shared/data; skips the test when it is absent."""
  if not os.path.isdir(SHARED_DATA):
    pytest.skip(f"{SHARED_DATA} is absent")
  return SHARED_DATA
