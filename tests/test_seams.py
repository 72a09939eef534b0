"""The seams a user extends through --t2t_usr_dir: a search, a learning-rate
schedule factor and a training hook, run through the commands; and the
exponential moving average, the built-in hook."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from commands import t2t_command
from conftest import TINY_RUN
from t2t_keras.io import checkpoint_io
from t2t_keras import registry
from t2t_keras.hparams import HParams
from t2t_keras.training.config import CheckpointPolicy
from t2t_keras.training.ema import ExponentialMovingAverage
from t2t_keras.training.run import RunConfig, train
from t2t_keras.training.schedule import paper_learning_rate

# A user's directory: each piece is only what is new, registered.
USR = '''
import json, os
import tensorflow as tf
from t2t_keras import registry
from t2t_keras.decoding.searches.token_by_token import TokenSearch
from t2t_keras.ids import EOS_ID
from t2t_keras.training.hooks import TrainingHook

@registry.register_search("late_eos")
class LateEos(TokenSearch):
  """Greedy, but EOS only from step min_length on."""
  settings = {"min_length": 0}

  def choose(self, log_probs, step):
    early = step < self.options.min_length
    no_eos = tf.where(tf.range(tf.shape(log_probs)[1]) == EOS_ID, -1e9, 0.0)
    log_probs += tf.where(early, no_eos, 0.0)[None]
    return tf.argmax(log_probs, -1, output_type=tf.int32)

@registry.register_schedule("halve")
def halve(step, params):
  return 0.5

@registry.register_hook("record_rates")
class RecordRates(TrainingHook):
  def __init__(self, hparams):
    self.rates = {}

  def after_update(self, trainer, step, logs):
    self.rates[step] = float(trainer.optimizer.learning_rate)

  def end(self, trainer):
    with open(os.environ["RATES_FILE"], "w") as f:
      json.dump(self.rates, f)
'''


@pytest.fixture(scope="module")
def usr_dir(tmp_path_factory):
  usr = tmp_path_factory.mktemp("seams") / "my_seams"
  usr.mkdir()
  (usr / "__init__.py").write_text(USR)
  return str(usr)


def test_user_schedule_and_hook_through_t2t_trainer(trained_run, usr_dir,
                                                     tmp_path):
  data, _ = trained_run
  rates = str(tmp_path / "rates.json")
  done = t2t_command(
      "t2t_trainer", "--problem=translate_synthetic",
      "--hparams_set=transformer_tiny",
      f"--hparams={TINY_RUN},learning_rate_schedule=paper*halve,"
      "training_hooks=record_rates", f"--data_dir={data}",
      f"--output_dir={tmp_path / 'run'}", "--train_steps=12",
      "--eval_bleu=false", f"--t2t_usr_dir={usr_dir}",
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", RATES_FILE=rates))
  assert done.returncode == 0, done.stderr[-3000:]
  with open(rates, encoding="utf-8") as f:
    seen = {int(k): v for k, v in json.load(f).items()}
  assert sorted(seen) == list(range(1, 13))
  for step, rate in seen.items():   # read after update `step`: the next one's
    assert rate == pytest.approx(0.5 * float(paper_learning_rate(
        step + 1, 64, 40)), rel=1e-5)


def test_user_search_through_t2t_decoder(trained_run, usr_dir, tmp_path):
  data, out = trained_run
  source = tmp_path / "in.txt"
  source.write_text("the cat\nthe big dogs see a cat\nhouses\n")
  outputs = {}
  for name, hparams in (("greedy", "beam_size=1"),
                        ("late", "search=late_eos,min_length=25")):
    target = tmp_path / f"{name}.txt"
    done = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                       f"--data_dir={data}", f"--output_dir={out}",
                       f"--decode_hparams={hparams}",
                       f"--decode_from_file={source}",
                       f"--decode_to_file={target}",
                       f"--t2t_usr_dir={usr_dir}")
    assert done.returncode == 0, done.stderr[-3000:]
    outputs[name] = target.read_text().split("\n")[:-1]
    assert len(outputs[name]) == 3
  assert "late_eos" in done.stderr
  # Greedy with EOS held back to step 25: each output continues greedy's,
  # and is longer wherever greedy's ended sooner (a model that rambles to
  # the length limit, as one trained this briefly may on some CPUs, gives
  # both the same output there).
  vocab = registry.problem("translate_synthetic").vocab(data)
  for greedy, late in zip(outputs["greedy"], outputs["late"]):
    assert late.startswith(greedy), (greedy, late)
    if len(vocab.encode(greedy)) < 25:
      assert len(late) > len(greedy), (greedy, late)
  unknown = t2t_command("t2t_decoder", "--problem=translate_synthetic",
                        f"--data_dir={data}", f"--output_dir={out}",
                        "--decode_hparams=search=late_eso",
                        f"--decode_from_file={source}",
                        f"--t2t_usr_dir={usr_dir}")
  assert unknown.returncode == 2
  assert "late_eos" in unknown.stderr.strip().splitlines()[-1]


class _FakeTrainer:
  def __init__(self, weights):
    self.strategy = tf.distribute.get_strategy()
    self.model = type("M", (), {"trainable_variables": weights})()


def test_ema_is_the_average_and_swaps_in_for_use():
  w = tf.Variable([1.0, 2.0])
  hook = ExponentialMovingAverage(HParams(ema_decay=0.5))
  trainer = _FakeTrainer([w])
  hook.attach(trainer)
  hook.begin(trainer, restored=False)
  expected = np.array([1.0, 2.0])
  for step, value in enumerate(([3.0, 2.0], [5.0, 6.0]), 1):
    w.assign(value)
    hook.after_update(trainer, step, {})
    d = min(0.5, (1 + step) / (10 + step))   # the warm-up: 2/11, 3/12
    expected = d * expected + (1 - d) * np.array(value)
  with hook.weights_for_use(trainer):
    np.testing.assert_allclose(w.numpy(), expected)
  np.testing.assert_allclose(w.numpy(), [5.0, 6.0])   # training weights back


def test_ema_run_resumes_exactly_and_saves_the_average(trained_run,
                                                       tmp_path):
  data, _ = trained_run

  def run(out, steps):
    train(RunConfig("translate_synthetic", "transformer_tiny", out,
                    data_dir=data, train_steps=steps,
                    hparams_overrides=TINY_RUN + ",ema_decay=0.9",
                    eval_bleu=False, eval_every=10,
                    checkpoints=CheckpointPolicy(every_secs=None,
                                                 every_steps=10)),
          log=lambda _: None)
    return checkpoint_io.listed(out)[-1]

  unbroken = run(str(tmp_path / "a"), 20)
  run(str(tmp_path / "b"), 10)
  resumed = run(str(tmp_path / "b"), 20)
  reader_a = tf.train.load_checkpoint(unbroken)
  reader_b = tf.train.load_checkpoint(resumed)
  names = [n for n, _ in tf.train.list_variables(unbroken)
           if n.startswith(("model/", "ema/"))]
  assert any(n.startswith("ema/") for n in names)
  for name in names:
    np.testing.assert_array_equal(reader_a.get_tensor(name),
                                  reader_b.get_tensor(name), err_msg=name)
  # The model slot holds the average, the ema slot the training weights.
  model = [n for n in names if n.startswith("model/") and "embeddings" in n]
  ema = [n for n in names if n.startswith("ema/")]
  assert model and ema
  assert not any(np.array_equal(reader_a.get_tensor(model[0]),
                                reader_a.get_tensor(e)) for e in ema)
