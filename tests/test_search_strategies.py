"""A multi-hypothesis search is a strategy on the shared loop
(decoding/searches/hypotheses.py): diverse beam search, a test-only one
in one file (tests/fixtures/diverse_beam), registered through
--t2t_usr_dir, runs through t2t-decoder's TensorFlow graph, --xla,
KERAS_BACKEND=jax and a SavedModel, and gives the same lines in each."""

import os

import numpy as np

import search_cases
from commands import lines_in_every_backend
from t2t_keras import registry
from t2t_keras.decoding import beam_search
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.searches.search import make_search

USR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                   "diverse_beam")
DIVERSE = "search=diverse_beam,beam_size=4,diversity_strength=2.0"
LINES = ["the cat", "the big dogs see a cat", "houses", "a dog sees the cat",
         "cats"]


def test_the_strategy_is_one_short_file():
  with open(os.path.join(USR, "__init__.py"), encoding="utf-8") as f:
    assert len(f.read().splitlines()) <= 60


def test_one_group_is_beam_search_and_groups_diversify():
  registry.import_usr_dir(USR)
  model = search_cases.build("transformer")
  inputs, _ = search_cases.batch()
  nbest = "beam_size=4,return_beams=True,extra_length=6"
  beam_ids, beam_scores = beam_search(model, inputs, 4, 0.6, 6, nbest=True)
  one = make_search(decode_hparams(
      f"{nbest},search=diverse_beam,diversity_groups=1"))
  ids, scores = one(model, inputs)
  np.testing.assert_array_equal(ids, beam_ids)
  np.testing.assert_array_equal(scores, beam_scores)
  two = make_search(decode_hparams(
      f"{nbest},search=diverse_beam,diversity_strength=5.0"))
  ids, _ = two(model, inputs)
  assert ids.shape == beam_ids.shape
  assert _spread(ids) > _spread(beam_ids), (_spread(ids), _spread(beam_ids))


def _spread(ids):
  """The tokens in which a sentence's hypotheses differ, pair by pair,
  summed over the batch."""
  ids = np.asarray(ids)
  return int(sum(np.sum(ids[:, i] != ids[:, j])
                 for i in range(ids.shape[1]) for j in range(i)))


def test_the_strategy_in_every_backend(trained_run, tmp_path):
  data, out = trained_run
  source = tmp_path / "in.txt"
  source.write_text("".join(l + "\n" for l in LINES), encoding="utf-8")
  common = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={out}", f"--t2t_usr_dir={USR}",
            f"--decode_hparams={DIVERSE}"]
  outputs = lines_in_every_backend(common, source, tmp_path)
  assert len(outputs["graph"]) == len(LINES)
  for mode in ("xla", "jax", "saved_model"):
    assert outputs[mode] == outputs["graph"], (mode, outputs)
