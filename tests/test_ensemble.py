"""Ensembles: several runs of one problem decoding as one."""

import io
import shutil

import numpy as np
import pytest

from conftest import TINY_RUN
from t2t_keras import registry
from t2t_keras.decoding import run
from t2t_keras.decoding.batching import padded
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.splits import split_text
from t2t_keras.decoding.jobs.scoring import Scorer
from t2t_keras.errors import UserError
from t2t_keras.export.run import export_run
from t2t_keras.io.lines import LineReader
from t2t_keras.models.builder import load_model_from_dir, load_models
from t2t_keras.models.ensemble import Ensemble
from t2t_keras.training.run import RunConfig, train


def _search(model, vocab, ids, overrides):
  decoder = Decoder(model, vocab, decode_hparams(overrides))
  return decoder.search(padded(ids))


def test_ensemble_of_a_model_with_itself_is_the_model(trained_run, tmp_path):
  data, out = trained_run
  problem = registry.problem("translate_synthetic")
  vocab = problem.vocab(data)
  model, _, _, _ = load_model_from_dir(out)
  _, sources, _ = split_text(problem, data, "test", 12)
  ids = [vocab.encode(s) + [1] for s in sources]
  twice, _, _, _ = load_models(out, f"{out},{out}")
  assert isinstance(twice, Ensemble) and len(twice.members) == 2
  for overrides in ("beam_size=1", "beam_size=3"):
    alone = _search(model, vocab, ids, overrides)
    paired = _search(twice, vocab, ids, overrides)
    np.testing.assert_array_equal(alone[0], paired[0])
    np.testing.assert_allclose(alone[1], paired[1], rtol=1e-5, atol=1e-5)
  pairs = list(zip(sources, sources))
  first = Scorer(model, vocab).score(pairs)
  np.testing.assert_allclose(
      [s for s, _ in first],
      [s for s, _ in Scorer(twice, vocab).score(pairs)], rtol=1e-5)
  # A different second model: the ensemble differs from both members.
  other = str(tmp_path / "other")
  train(RunConfig("translate_synthetic", "transformer_tiny", other,
                  data_dir=data, train_steps=3, seed=7, eval_bleu=False,
                  eval_steps=1, hparams_overrides=TINY_RUN),
        log=lambda _: None)
  mixed, _, _, used = load_models(out, f"{out},{other}")
  assert used.count("ckpt-") == 2
  scores = {name: Scorer(m, vocab).score(pairs) for name, m in (
      ("second", load_model_from_dir(other)[0]), ("both", mixed))}
  scores["first"] = first
  assert scores["both"] != scores["first"] and \
      scores["both"] != scores["second"]
  # Through t2t-decoder's code, one line per input; the export refuses.
  target = io.BytesIO()
  run.decode("translate_synthetic", out, data,
             LineReader(io.BytesIO("".join(s + "\n" for s in sources)
                                   .encode("utf-8")), "in"), target,
             checkpoint_path=f"{out},{other}", log=lambda _: None)
  assert len(target.getvalue().decode("utf-8").splitlines()) == 12
  with pytest.raises(UserError, match="exports one model"):
    export_run("translate_synthetic", out, data,
               checkpoint_path=f"{out},{other}")
  shutil.rmtree(other)
