"""weights=int8|bfloat16: the decoder's matrices rounded once where the
model is prepared (kernels.quantize, models.prepared), the same rounding
on every backend."""

import numpy as np
import pytest

from commands import lines_in_every_backend, t2t_command
from t2t_keras.errors import UserError
from t2t_keras.kernels import quantize
from t2t_keras.models.prepared import prepare_for_decoding
from t2t_keras.models.prepared.products import step_layers

from test_prepared import ids, stepped, tiny


def test_int8_keeps_each_column_within_half_its_scale():
  rng = np.random.RandomState(0)
  w = rng.normal(0, 0.1, (64, 48)).astype(np.float32)
  w[:, 5] = 0.0                                   # an all-zero column
  q, scale = quantize.int8(w)
  assert q.dtype == np.int8 and scale.shape == (48,)
  assert np.abs(q).max() == 127 and q[:, 5].tolist() == [0] * 64
  back = quantize.dequantized(q, scale)
  assert np.all(np.abs(back - w) <= scale / 2 + 1e-7)
  # Rounding a rounded matrix again changes nothing.
  again = quantize.dequantized(*quantize.int8(back))
  np.testing.assert_allclose(again, back, rtol=1e-6, atol=0)
  assert np.abs(quantize.rounded(w, "bfloat16") - w).max() <= (
      np.abs(w).max() * 2.0 ** -8)
  with pytest.raises(ValueError, match="weights must be one of"):
    quantize.check("int4")


def rounded_in_place(model, weights):
  """Rounds, in the model itself, every matrix ``weights`` would round:
  the steps' and the embedding's rows (W^T's columns)."""
  for _, layers in step_layers(model):
    for dense in layers:
      dense.kernel.assign(quantize.rounded(dense.kernel.numpy(), weights))
  embedding = model.softmax_weights.embeddings
  embedding.assign(quantize.rounded(embedding.numpy().T, weights).T)


def test_int8_decodes_the_model_with_its_matrices_rounded(monkeypatch):
  """A prepared int8 model steps as the float32 model whose matrices hold
  the rounded values; on a model not rounded it moves the logits, a
  little."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  model = tiny("transformer", 3)
  inputs, targets = ids(4, 3, 6), ids(5, 3, 5)
  float32, _ = stepped(model, inputs, targets)
  for hypotheses in (1, 4):
    int8, _ = stepped(prepare_for_decoding(model, True, weights="int8"),
                      inputs, targets, hypotheses)
    moved = np.abs(int8.numpy() - float32.numpy()).max()
    assert 1e-4 < moved < 0.1, moved
  rounded_in_place(model, "int8")
  want, _ = stepped(model, inputs, targets)
  for batch in (1, 3):
    got, _ = stepped(prepare_for_decoding(model, True, weights="int8"),
                     inputs[:batch], targets[:batch], 1)
    np.testing.assert_allclose(got.numpy(), want.numpy()[:batch], rtol=1e-5,
                               atol=1e-5)


def test_bfloat16_multiplies_in_bfloat16(monkeypatch):
  """Stored bfloat16 matrices: logits near float32's, not equal."""
  monkeypatch.setenv("T2T_KERAS_KERNELS", "1")
  model = tiny("transformer", 6)
  prepared = prepare_for_decoding(model, True, weights="bfloat16")
  assert {v.dtype.name for v in prepared.variables()} == {"bfloat16"}
  inputs, targets = ids(7, 2, 6), ids(8, 2, 5)
  want, _ = stepped(model, inputs, targets)
  got, _ = stepped(prepared, inputs, targets, 1)
  moved = np.abs(got.numpy() - want.numpy()).max()
  assert 1e-4 < moved < 0.2, moved


def test_rounding_needs_fixed_weights_and_a_walkable_model():
  model = tiny("transformer", 9)
  with pytest.raises(UserError, match="validation while training"):
    prepare_for_decoding(model, weights="int8")
  with pytest.raises(ValueError, match="weights must be one of"):
    prepare_for_decoding(model, True, weights="int4")
  from t2t_keras.decoding.options import decode_hparams, describe_precision
  with pytest.raises(UserError, match="float32, bfloat16, int8, got 'int4'"):
    decode_hparams("weights=int4")
  assert describe_precision(model, decode_hparams("weights=int8")) == (
      "float32 (int8 decoder weights)")



def test_an_ensemble_is_checked_whole_before_any_member_is_rounded():
  """A member that steps through its own decode_step is refused in one
  line, and the members before it are left as they were."""
  from t2t_keras.models.ensemble import Ensemble
  from t2t_keras.models.prepared import round_weights
  first, second = tiny("transformer", 1), tiny("transformer", 2)

  class OwnStep(type(second)):
    def decode_step(self, *args, **kwargs):
      return super().decode_step(*args, **kwargs)

  second.__class__ = OwnStep
  kernel = first.decoder.blocks[0].feed_forward.linear_maps()[0].kernel
  before = kernel.numpy().copy()
  with pytest.raises(UserError, match="OwnStep decodes through a decode_step"):
    round_weights(Ensemble([first, second]), "int8")
  np.testing.assert_array_equal(kernel.numpy(), before)

LINES = ["the dog sees a cat", "these old teachers help a small boat",
         "a bird", "that happy farmer calls the dark windows near a tree",
         "the red cars follow these young horses", "cats", "the big dogs"]
SEARCHES = ("beam_size=4,return_beams=true", "beam_size=1",
            "sampling=topk,top_k=4,seed=3", "sampling=topp,top_p=0.9,seed=5")


@pytest.fixture(scope="module")
def rounded_runs(trained_run):
  """The trained run's model as float32, and loaded again and rounded in
  place for each of int8 and bfloat16."""
  from t2t_keras import registry
  from t2t_keras.models.builder import load_model_from_dir
  from t2t_keras.models.prepared import round_weights
  data, run = trained_run
  vocab = registry.problem("translate_synthetic").vocab(data)
  models = {"float32": load_model_from_dir(run)[0]}
  for weights in ("int8", "bfloat16"):
    models[weights] = load_model_from_dir(run)[0]
    round_weights(models[weights], weights)
  return vocab, models


@pytest.fixture(scope="module")
def float32_decoded(rounded_runs):
  """decoded() of the float32 model, each (options, prefixes) once a
  module: both rounded modes compare with it."""
  vocab, models = rounded_runs
  outputs = {}

  def get(options, prefixes):
    key = (options, tuple(prefixes or ()))
    if key not in outputs:
      outputs[key] = decoded(models["float32"], vocab, options, prefixes)
    return outputs[key]
  return get


def decoded(model, vocab, options, prefixes=None):
  from t2t_keras.decoding.backends.decoder import Decoder
  from t2t_keras.decoding.options import decode_hparams
  decoder = Decoder(model, vocab, decode_hparams(options),
                    fixed_weights=True)
  return decoder.decode(LINES, prefixes=prefixes)


def best(output):
  """A line's output, the best of an n-best list (return_beams)."""
  return output[0][0] if isinstance(output, list) else output


@pytest.mark.parametrize("weights", ["int8", "bfloat16"])
def test_every_search_runs_on_rounded_weights(rounded_runs, float32_decoded,
                                             weights):
  """Beam (n-best), greedy, both samplings, target prefixes and an
  ensemble on rounded weights: one output a line, the best mostly float32's
  (sampling's draws move with the probabilities); int8's
  the float32 search's of the rounded model exactly (TensorFlow multiplies
  int8's Q * s in float32; bfloat16 multiplies in bfloat16)."""
  vocab, models = rounded_runs
  prefixes = ["the", "", "a", "", "these", "", ""]
  same = total = 0
  for options in SEARCHES:
    for prefix in (None, prefixes):
      got = decoded(models[weights], vocab, f"{options},weights={weights}",
                    prefix)
      want = float32_decoded(options, prefix)
      assert len(got) == len(LINES)
      if "sampling" not in options:   # a draw moves with its probabilities
        same += sum(best(g) == best(w) for g, w in zip(got, want))
        total += len(LINES)
      if weights == "int8":
        assert got == decoded(models["int8"], vocab, options, prefix)
  assert same >= 0.8 * total, (same, total)
  from t2t_keras.models.ensemble import Ensemble
  pair = Ensemble([models[weights], models[weights]])
  assert decoded(pair, vocab, f"beam_size=4,weights={weights}") == decoded(
      models[weights], vocab, f"beam_size=4,weights={weights}")


def test_scores_and_alignments_read_the_rounded_model(rounded_runs):
  """Forced scores of int8's best outputs are the search's own scores;
  alignments come from the rounded model's attention."""
  from t2t_keras.decoding.backends.decoder import Decoder
  from t2t_keras.decoding.jobs.alignments import Aligner
  from t2t_keras.decoding.jobs.scoring import Scorer
  from t2t_keras.decoding.options import decode_hparams
  vocab, models = rounded_runs
  decoder = Decoder(models["int8"], vocab,
                    decode_hparams("beam_size=2,alpha=0,return_beams=true,"
                                   "weights=int8"), fixed_weights=True)
  # The first five end with EOS within the length limit (a cut output's
  # forced score adds EOS's).
  sources = LINES[:5]
  found = [beams[0] for beams in decoder.decode(sources)]
  pairs = [(s, text) for s, (text, _) in zip(sources, found)]
  scored = Scorer(models["int8"], vocab).score(pairs)
  np.testing.assert_allclose([s for s, _ in scored],
                             [score for _, score in found], atol=2e-3)
  floats = Scorer(models["float32"], vocab).score(pairs)
  assert max(abs(a[0] - b[0]) for a, b in zip(scored, floats)) > 1e-4
  aligned = Aligner(models["int8"], vocab).align(
      sources, [text for text, _ in found])
  assert len(aligned) == len(sources) and all(aligned)


def test_int8_in_every_backend(trained_run, tmp_path):
  """t2t-decoder's graph, --xla, KERAS_BACKEND=jax and t2t-exporter's
  SavedModel decode the same int8 model: the same lines."""
  data, out = trained_run
  source = tmp_path / "in.txt"
  source.write_text("".join(l + "\n" for l in LINES), encoding="utf-8")
  common = ["--problem=translate_synthetic", f"--data_dir={data}",
            f"--output_dir={out}", "--decode_hparams=beam_size=4,weights=int8"]
  # T2T_KERAS_KERNELS=1: JAX's packed layout, weight-only int8 as the graph
  # (the probe may pick "native", whose rows are rounded too).
  outputs = lines_in_every_backend(common, source, tmp_path,
                                   {"T2T_KERAS_KERNELS": "1"})
  assert len(outputs["graph"]) == len(LINES)
  for mode in ("xla", "jax", "saved_model"):
    assert outputs[mode] == outputs["graph"], (mode, outputs)


def test_ctranslate2_takes_its_own_int8(trained_run, tmp_path):
  """A CTranslate2 export quantizes with --ct2_compute_type: the exporter
  refuses weights= in one line and writes nothing."""
  data, out = trained_run
  target = tmp_path / "ct2"
  done = t2t_command("t2t_exporter", "--problem=translate_synthetic",
                     f"--data_dir={data}", f"--output_dir={out}",
                     "--format=ctranslate2", f"--export_dir={target}",
                     "--decode_hparams=weights=int8")
  assert done.returncode != 0
  assert "--ct2_compute_type=int8" in done.stderr
  assert "Traceback" not in done.stderr
  assert not target.exists()
