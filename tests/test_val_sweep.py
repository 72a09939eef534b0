"""benchmarks/val_sweep_jax.py: its batches follow the trainer's token
budget, its settings file is read or refused in one line, and (where jax is
installed) a toy sweep trains and scores under the JAX backend."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = os.path.join(os.path.dirname(HERE), "benchmarks")
SCRIPT = os.path.join(BENCHMARKS, "val_sweep_jax.py")


def _module():
  """benchmarks/sweep_data.py, the sweep's data side (no JAX needed)."""
  spec = importlib.util.spec_from_file_location(
      "sweep_data", os.path.join(BENCHMARKS, "sweep_data.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_bucket_bounds_match_the_trainers():
  from t2t_keras.data import pipeline
  for max_length in (8, 50, 256):
    assert _module().bucket_boundaries(max_length) == \
        pipeline.bucket_boundaries(max_length)


def test_batches_keep_the_token_budget_and_see_every_example():
  sweep = _module()
  rng = np.random.RandomState(0)
  lengths = rng.randint(1, 40, size=300)
  src = [rng.randint(2, 50, size=n) for n in lengths]
  tgt = [rng.randint(2, 50, size=max(1, n - 3)) for n in lengths]
  bounds = sweep.bucket_boundaries(30)
  seen = []
  stream = sweep.batches(src, tgt, batch_size=256, max_length=30, seed=1)
  for _ in range(60):
    batch = next(stream)
    inputs, targets = batch["inputs"], batch["targets"]
    assert inputs.shape == targets.shape and inputs.shape[1] % 16 == 0
    real = np.flatnonzero((inputs != 0).any(axis=1))
    longest = max(max(np.count_nonzero(inputs[r]),
                      np.count_nonzero(targets[r])) for r in real)
    bound = bounds[np.searchsorted(bounds, longest)]
    # One bucket's examples: as many as the trainer batches for its bound.
    assert len(real) == 256 // bound
    for r in real:
      n = np.count_nonzero(inputs[r])
      match = [i for i, s in enumerate(src) if len(s) == n and
               np.array_equal(s, inputs[r, :n]) and
               np.array_equal(tgt[i], targets[r, :len(tgt[i])]) and
               not targets[r, len(tgt[i]):].any()]
      assert match, (inputs[r], targets[r])
      seen.append(match[0])
  kept = {i for i, n in enumerate(lengths) if n <= 30}
  assert not set(seen) - kept                 # longer examples are dropped
  assert len(set(seen)) > 0.9 * len(kept)     # an epoch and more, shuffled


def test_settings_file_is_read_and_a_bad_line_refused(tmp_path):
  sweep = _module()
  path = tmp_path / "sweep.txt"
  path.write_text("# comment\nbase transformer_tiny - \n"
                  "lr transformer_tiny learning_rate=2 7  # seed 7\n")
  assert sweep.read_settings(str(path)) == [
      ("base", "transformer_tiny", "", 1234),
      ("lr", "transformer_tiny", "learning_rate=2", 7)]
  path.write_text("base transformer_tiny\n")
  with pytest.raises(SystemExit, match=r"sweep.txt:1: expected 'name "):
    sweep.read_settings(str(path))


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="jax is not installed")
def test_a_toy_sweep_trains_and_scores_on_jax(tmp_path):
  """A copy task, two settings in two processes: a result at each scored
  step, and dev loss falling."""
  from t2t_keras.data.vocab import SubwordVocab
  words = "a man in a red shirt rides a bike down the street".split()
  vocab = SubwordVocab.build([" ".join(words[i:] + words[:i])
                              for i in range(len(words))] * 20, 300)
  rng = np.random.RandomState(0)
  sentences = [" ".join(rng.choice(words, rng.randint(2, 6)))
               for _ in range(200)]
  ids = [vocab.encode(s) + [1] for s in sentences]
  arrays = {"vocab": np.frombuffer(vocab.model_proto, np.uint8),
            "dev_references": np.array(sentences[:16])}
  for split, seqs in (("train", ids), ("dev", ids[:16])):
    for key in ("inputs", "targets"):
      arrays[f"{split}_{key}"] = np.concatenate(seqs).astype(np.int32)
      arrays[f"{split}_{key}_len"] = np.array([len(s) for s in seqs])
  np.savez(tmp_path / "toy.npz", **arrays)
  (tmp_path / "sweep.txt").write_text(
      "a transformer_tiny learning_rate_warmup_steps=10,batch_size=256 1\n"
      "b transformer_tiny learning_rate_warmup_steps=10,batch_size=256 2\n")
  env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
  result = subprocess.run(
      [sys.executable, SCRIPT, "run", f"--data={tmp_path / 'toy.npz'}",
       f"--configs={tmp_path / 'sweep.txt'}", "--steps=20", "--evals=5",
       "--snapshot_every=5", "--parallel=2", f"--out_dir={tmp_path}"],
      capture_output=True, text=True, env=env, timeout=900, check=False)
  assert result.returncode == 0, result.stdout + result.stderr
  rows = [json.loads(l) for l in open(tmp_path / "results.jsonl")]
  assert not [r for r in rows if "error" in r], rows
  for name in ("a", "b"):
    first, last = [r for r in rows if r["name"] == name]
    assert (first["step"], last["step"]) == (5, 20)
    assert last["dev_loss"] < first["dev_loss"]
  assert "| a | learning_rate_warmup_steps=10" in result.stdout
