"""The model contract (t2t_keras.models.base), checked for every registered
model: cached decoding equals the full pass, padding changes no real
position, the decoder is causal, reordering the cache follows the rows, and
an export gives the in-process search's outputs. A model that is not a
Transformer at all decodes through the same search with two vocabularies."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from commands import python
import t2t_keras
from t2t_keras import registry
from t2t_keras.data.vocab import SubwordVocab
from t2t_keras.decoding import search_function
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.export.exporter import export
from t2t_keras.layers.decoder import DecoderLayer
from t2t_keras.models.base import Seq2SeqModel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = registry.list_models()
SMALL = ("hidden_size=16,filter_size=32,num_heads=2,"
         "layer_prepostprocess_dropout=0.0")
VOCAB = 23


def tiny(name, vocab_size=VOCAB):
  """Every model has an hparams set named <model>_tiny."""
  return t2t_keras.build_model(f"{name}_tiny", vocab_size=vocab_size,
                               model=name, hparams_overrides=SMALL)


def logits(model, inputs, targets):
  return ops.convert_to_numpy(model({"inputs": inputs, "targets": targets}))


def random_ids(seed, batch, length):
  return np.random.RandomState(seed).randint(
      2, VOCAB, size=(batch, length)).astype("int32")


def test_both_models_are_registered():
  assert {"transformer", "transformer_relative"} <= set(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_cached_decoding_equals_the_full_pass(name):
  model = tiny(name)
  assert isinstance(model, Seq2SeqModel)
  inputs, targets = random_ids(1, 3, 7), random_ids(2, 3, 26)
  inputs[0, 5:] = 0
  full = logits(model, inputs, targets)
  cache = model.init_cache(model.encode(inputs), 30)
  previous = np.zeros(3, "int32")
  for t in range(targets.shape[1]):       # past the relative clipping (20)
    step, cache = model.decode_step(previous, t, cache)
    np.testing.assert_allclose(ops.convert_to_numpy(step), full[:, t],
                               atol=2e-5, rtol=2e-5)
    previous = targets[:, t]


class _CrossFirst(DecoderLayer):
  """A block variant written once, in ``wire``: encoder-decoder attention
  before self-attention."""

  def wire(self, x, self_attend, cross_attend, feed_forward, training):
    return super().wire(x, cross_attend, self_attend, feed_forward,
                        training)


def test_a_block_variant_is_wired_once_for_both_paths():
  """A decoder layer that overrides only ``wire`` changes the full pass
  and the cached step alike."""
  model = tiny("transformer")
  inputs, targets = random_ids(1, 2, 6), random_ids(2, 2, 5)
  plain = logits(model, inputs, targets)
  for block in model.decoder.blocks:
    block.__class__ = _CrossFirst
  full = logits(model, inputs, targets)
  assert np.abs(full - plain).max() > 1e-3   # the variant ran
  cache = model.init_cache(model.encode(inputs), 8)
  previous = np.zeros(2, "int32")
  for t in range(targets.shape[1]):
    step, cache = model.decode_step(previous, t, cache)
    np.testing.assert_allclose(ops.convert_to_numpy(step), full[:, t],
                               atol=2e-5, rtol=2e-5)
    previous = targets[:, t]


@pytest.mark.parametrize("name", MODELS)
def test_reorder_cache_follows_the_rows(name):
  # Three hypotheses (beams) of one source sentence, as in beam search.
  model = tiny(name)
  inputs = np.repeat(random_ids(3, 1, 5), 3, axis=0)
  targets = random_ids(4, 3, 6)
  full = logits(model, inputs, targets)
  order = np.array([2, 0, 2], "int32")
  cache = model.init_cache(model.encode(inputs), 8)
  previous = np.zeros(3, "int32")
  for t in range(4):
    _, cache = model.decode_step(previous, t, cache)
    previous = targets[:, t]
  cache = model.reorder_cache(cache, order)
  step, _ = model.decode_step(previous[order], 4, cache)
  np.testing.assert_allclose(ops.convert_to_numpy(step), full[order, 4],
                             atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("name", MODELS)
def test_padding_changes_no_real_position(name):
  model = tiny(name)
  inputs, targets = random_ids(5, 2, 5), random_ids(6, 2, 4)
  base = logits(model, inputs, targets)
  padded = logits(model, np.pad(inputs, ((0, 0), (0, 3))),
                  np.pad(targets, ((0, 0), (0, 2))))
  np.testing.assert_allclose(padded[:, :4], base, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("name", MODELS)
def test_the_decoder_is_causal(name):
  model = tiny(name)
  inputs, targets = random_ids(7, 2, 5), random_ids(8, 2, 8)
  base = logits(model, inputs, targets)
  changed = targets.copy()
  changed[:, 5:] = 2
  later = logits(model, inputs, changed)
  np.testing.assert_allclose(later[:, :6], base[:, :6], atol=2e-5)
  assert np.abs(later[:, 6:] - base[:, 6:]).max() > 1e-4


@pytest.fixture(scope="module")
def vocabs():
  rng = np.random.RandomState(0)
  words = ["".join(rng.choice(list("abcdefghijklmnop"), rng.randint(2, 7)))
           for _ in range(400)]
  lines = [" ".join(rng.choice(words, 8)) for _ in range(2000)]
  source = SubwordVocab.build(lines, 300)
  target = SubwordVocab.build([l.upper() for l in lines], 400, "unigram")
  assert source.size < target.size
  return source, target, lines[:6]


@pytest.mark.parametrize("name", MODELS)
def test_export_round_trips(name, vocabs, tmp_path):
  vocab, _, lines = vocabs
  model = tiny(name, vocab_size=vocab.size)
  hparams = decode_hparams("beam_size=2,extra_length=5")
  path = export(model, vocab, hparams, str(tmp_path), version=1)
  served = tf.saved_model.load(path)
  ids = tf.constant([vocab.encode(l)[:9] + [1] for l in lines[:3]],
                    tf.int32)
  exported = served.signatures["decode_ids"](input_ids=ids)
  searched, scores = search_function(model, hparams)(ids)
  np.testing.assert_array_equal(exported["output_ids"].numpy(),
                                searched[:, 0].numpy())
  np.testing.assert_allclose(exported["scores"].numpy(),
                             scores[:, 0].numpy(), rtol=1e-5)
  strings = served.signatures["serving_default"](
      inputs=tf.constant(lines[:3]))["outputs"].numpy()
  expected = Decoder(model, vocab, hparams).decode(lines[:3])
  assert [s.decode("utf-8") for s in strings] == expected


class Echo(Seq2SeqModel):
  """A contract-only model (no Transformer part) that repeats its input."""

  def __init__(self, vocab_size, **kwargs):
    super().__init__(**kwargs)
    self.vocab_size = vocab_size

  def call(self, features, training=None):
    return ops.one_hot(features["targets"], self.vocab_size)

  def encode(self, inputs, training=None):
    return {"ids": inputs}

  def init_cache(self, state, max_length):
    ids = state["ids"]
    return {"ids": ops.pad(ids, ((0, 0), (0, max_length)))}

  def decode_step(self, ids, step, cache):
    token = ops.take(cache["ids"], step, axis=1)
    return ops.one_hot(token, self.vocab_size) * 20.0, cache


@pytest.mark.parametrize("beam_size", [1, 3])
def test_any_contract_model_decodes_with_two_vocabularies(vocabs, beam_size):
  source, target, lines = vocabs
  decoder = Decoder(Echo(target.size),
                    source, decode_hparams(f"beam_size={beam_size}"),
                    target_vocab=target)
  expected = [target.decode(source.encode(l)) for l in lines]
  assert decoder.decode(lines) == expected
  assert expected != lines            # the target vocabulary was used


def test_problem_without_text_is_refused_in_one_line(tmp_path):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run(
      python("-m", "t2t_keras.bin.t2t_decoder", "--problem=copy_sequence",
             f"--output_dir={tmp_path}", f"--data_dir={tmp_path}"),
      input="1 2 3\n", capture_output=True,
      text=True, cwd=REPO, env=env, timeout=300, check=False)
  assert result.returncode == 2
  errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
  assert errors == [l for l in result.stderr.splitlines()
                    if "Traceback" in l or l.startswith("error:")]
  assert "copy_sequence has no text vocabulary" in errors[0]


def test_install_claims_no_top_level_problems_or_hparams(tmp_path):
  code = ("import importlib.util as u, t2t_keras.problems, "
          "t2t_keras.hparams_sets; "
          "print(u.find_spec('problems'), u.find_spec('hparams'))")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, cwd=str(tmp_path), timeout=300,
                          check=True)
  assert result.stdout.split() == ["None", "None"]
