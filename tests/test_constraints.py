"""Decoding constraints: parsing's well-formed trees through every search,
scoring and the SavedModel; target prefixes for translation."""

import io

import numpy as np
import pytest
import tensorflow as tf

from conftest import wsj_sample_data
from t2t_keras import registry
from t2t_keras.parsing import trees
from t2t_keras.decoding import run
from t2t_keras.decoding import length_penalty
from t2t_keras.decoding.searches.constraints import PrefixConstraint
from t2t_keras.decoding.batching import padded
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.decoding.splits import split_text
from t2t_keras.decoding.jobs.scoring import Scorer
from t2t_keras.export.run import export_run
from t2t_keras.ids import EOS_ID, PAD_ID
from t2t_keras.io.lines import LineReader
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras.training.run import RunConfig, train

TINY = "hidden_size=32,filter_size=64,num_hidden_layers=1,num_heads=2"


# parsing_wsj's linearizations under test: {variant: datagen options}.
VARIANTS = {"inorder": {}, "top_down": {"order": "top-down"},
            "first": {"order": "top-down", "leaves": "first"},
            "bare_close": {"order": "top-down", "close_labels": False}}


def _random_parser(variant, shared_data, tmp_path_factory):
  """(data_dir, run_dir, 50 dev sentences) of a parsing_wsj parser with
  ``VARIANTS[variant]``'s linearization, trained 1 step on the sample's
  first 600 trees (its dev split too; the run's closing evaluation reads
  one dev batch)."""
  root = tmp_path_factory.mktemp(variant)
  out = str(root / "run")
  data = wsj_sample_data(shared_data, root, "parsing_wsj", 600,
                         **VARIANTS[variant])
  train(RunConfig("parsing_wsj", "transformer_tiny", out, data_dir=data,
                  train_steps=1, hparams_overrides=TINY, eval_bleu=False,
                  eval_steps=1),
        log=lambda _: None)
  _, sources, _ = split_text(_parsing(data), data, "dev", 50)
  return data, out, sources


def _parsing(data):
  """parsing_wsj as ``data``'s recorded linearization makes it."""
  return registry.problem("parsing_wsj").for_data(data)


@pytest.fixture(scope="module", params=list(VARIANTS))
def random_parser(request, shared_data, tmp_path_factory):
  """``_random_parser`` of each variant."""
  return _random_parser(request.param, shared_data, tmp_path_factory)


def _decode(data, out, sources, overrides="", saved_model_dir=None):
  """t2t-decoder's run.decode in process: (output lines, log lines)."""
  log, target = [], io.BytesIO()
  source = LineReader(io.BytesIO("".join(s + "\n" for s in sources)
                                 .encode("utf-8")), "input")
  run.decode("parsing_wsj", out, data, source, target,
             decode_overrides=overrides, saved_model_dir=saved_model_dir,
             log=log.append)
  return target.getvalue().decode("utf-8").splitlines(), log


def _assert_trees_over(outputs, sources):
  assert len(outputs) == len(sources)
  for output, source in zip(outputs, sources):
    assert trees.words(trees.parse(output)) == source.split(), output


def test_random_parser_outputs_are_trees_over_the_input(random_parser,
                                                        tmp_path):
  data, out, sources = random_parser
  problem = _parsing(data)
  leaves = problem.leaves
  # Greedy as t2t-decoder runs it; a short length limit (random weights
  # open brackets up to it) keeps it quick and makes the length budget bind.
  outputs, log = _decode(data, out, sources, "beam_size=1,extra_length=20")
  _assert_trees_over(outputs, sources)
  assert "repaired 0 of 50" in log, log
  assert any("constrained (parsing_wsj)" in line for line in log), log
  # Beam search (a small beam, to keep it quick): its raw outputs, before
  # the repair t2t-decoder would apply, are well-formed linearized trees,
  # so none would be repaired; t2t-decoder's beam path, with its "repaired"
  # count, runs below through the SavedModel.
  model, _, _, _ = load_model_from_dir(out)
  decoder = Decoder(model, problem.vocab(data),
                    decode_hparams("beam_size=4,extra_length=20",
                                   problem.decode_defaults),
                    constraint=problem.decode_constraint(data))
  raw = decoder.decode(sources)
  for text, source in zip(raw, sources):
    assert trees.well_formed(text.split(), source.split(), leaves,
                             problem.order), text
    # At most 6 brackets opened in a row (random weights open brackets).
    assert "(" + " (".join(["X"] * 7) not in " ".join(
        "X" if t.startswith("(") else t for t in text.split()), text
  # Under "first" a leaf is its word's first piece: in 50 sentences some
  # word has several pieces, and the leaves are not all the words.
  assert all(trees.well_formed(t.split(), s.split(), "words", problem.order)
             for t, s in zip(raw, sources)) == (leaves == "words")
  # The SavedModel holds the constraint (and still passes the op check).
  export_dir = export_run("parsing_wsj", out, data,
                          decode_overrides="beam_size=4,extra_length=20",
                          export_dir=str(tmp_path / "export"), version=1,
                          log=lambda _: None)
  outputs, log = _decode(data, out, sources, saved_model_dir=export_dir)
  _assert_trees_over(outputs, sources)
  assert "repaired 0 of 50" in log, log
  # Without the constraint the same model does not parse.
  free = Decoder(model, problem.vocab(data),
                 decode_hparams("beam_size=1,extra_length=20",
                                problem.decode_defaults))
  assert sum(problem.repaired(t, s)
             for t, s in zip(free.decode(sources), sources)) > 25


def test_scoring_under_the_constraint_matches_the_search(random_parser):
  data, out, sources = random_parser
  problem = _parsing(data)
  model, _, _, _ = load_model_from_dir(out)
  constraint = problem.decode_constraint(data)
  vocab = problem.target_vocab(data)   # "first": encodes first pieces
  # A limit the outputs do not reach (EOS is forced there).
  decoder = Decoder(model, problem.vocab(data),
                    decode_hparams("beam_size=1,extra_length=300"),
                    constraint=constraint, target_vocab=vocab)
  batch = [decoder.encode(s) for s in sources[:8]]
  ids, scores = decoder.search(padded(batch))
  outputs = [vocab.decode(row[0]) for row in ids]
  scorer = Scorer(model, problem.vocab(data), vocab, constraint=constraint,
                  extra_length=300)
  for (log_prob, _), score in zip(
      scorer.score(list(zip(sources[:8], outputs))), scores[:, 0]):
    assert log_prob == pytest.approx(float(score), rel=1e-3, abs=1e-3)
  # A target the constraint forbids (a word missing) scores about -1e9.
  tokens = outputs[0].split()
  leaf = next(i for i, t in enumerate(tokens) if not trees.is_bracket(t))
  bad = " ".join(tokens[:leaf] + tokens[leaf + 1:])
  assert scorer.score([(sources[0], bad)])[0][0] < -1e8
  if problem.leaves == "first":   # whole words as leaves score
    words = iter(sources[0].split())         # as their first pieces
    whole = " ".join(t if trees.is_bracket(t) else next(words)
                     for t in tokens)
    assert scorer.score([(sources[0], whole)])[0][0] == pytest.approx(
        float(scores[0, 0]), rel=1e-3, abs=1e-3)


def test_prefixes_begin_each_output_and_score_as_forced(trained_run,
                                                        tmp_path):
  data, out = trained_run
  problem = registry.problem("translate_synthetic")
  vocab = problem.vocab(data)
  model, _, _, _ = load_model_from_dir(out)
  sources = [l.split("\t")[0] for l in _synthetic_lines(problem, data, 6)]
  free = Decoder(model, vocab, decode_hparams("beam_size=1")).decode(sources)
  # Each prefix: the first word of another sentence's free output, or none.
  prefixes = [free[(i + 1) % 6].split()[0] if i % 3 else ""
              for i in range(6)]
  compared = 0
  for overrides in ("beam_size=1", "beam_size=3"):
    hparams = decode_hparams(overrides)
    decoder = Decoder(model, vocab, hparams)
    encoded = [decoder.encode(s) for s in sources]
    prefix_ids = padded([vocab.encode(p) or [0] for p in prefixes])
    ids, scores = decoder.search(padded(encoded), prefix_ids)
    outputs = [vocab.decode(row[0]) for row in ids]
    for output, prefix, free_output in zip(outputs, prefixes, free):
      assert output.startswith(prefix)
      if not prefix and overrides == "beam_size=1":
        assert output == free_output
    # The score is the model's log-prob of prefix + continuation, as forced
    # decoding gives it (beam scores are length-penalized).
    # Only outputs that ended before their length limit: at the limit the
    # search forces EOS at no cost, and a briefly trained model rambles
    # there on some CPUs (those without AVX-512). And only outputs whose
    # text the scorer reads back as the same pieces: a rambling model can
    # emit a word in pieces that the vocabulary would segment otherwise.
    forced = Scorer(model, vocab).score(list(zip(sources, outputs)))
    for (log_prob, tokens), score, row, source, output in zip(
        forced, scores[:, 0], ids, encoded, outputs):
      pieces = [int(t) for t in np.asarray(row[0])
                if t not in (PAD_ID, EOS_ID)]
      if len(pieces) + 1 >= len(source) + hparams.extra_length or \
          pieces != list(vocab.encode(output)):
        continue
      compared += 1
      penalty = 1.0 if hparams.beam_size == 1 else float(
          length_penalty(tokens, hparams.alpha))
      assert log_prob == pytest.approx(float(score) * penalty, abs=2e-3)
  assert compared
  # Through t2t-decoder and through the SavedModel: the same lines.
  lines = {}
  export_dir = export_run("translate_synthetic", out, data,
                          decode_overrides="beam_size=3",
                          export_dir=str(tmp_path / "export"), version=1,
                          log=lambda _: None)
  for name, saved in (("checkpoint", None), ("saved_model", export_dir)):
    target = io.BytesIO()
    run.decode("translate_synthetic", out, data, _reader(sources), target,
               decode_overrides="beam_size=3", saved_model_dir=saved,
               prefixes=_reader(prefixes), log=lambda _: None)
    lines[name] = target.getvalue().decode("utf-8").splitlines()
  assert lines["checkpoint"] == lines["saved_model"] == outputs


def test_prefixes_are_whole_words_unless_the_last_word_may_go_on(
    trained_run, tmp_path):
  """50 prefixes that end inside a word of the free output ("kemi jeb"):
  every output goes on after its prefix with a space or ends there, through
  a checkpoint and through the SavedModel; with whole_word_prefixes=False
  the last word may go on ("kemi jebaen")."""
  data, out = trained_run
  problem = registry.problem("translate_synthetic")
  sources = [l.split("\t")[0] for l in _synthetic_lines(problem, data, 50)]
  free = io.BytesIO()
  run.decode("translate_synthetic", out, data, _reader(sources), free,
             decode_overrides="beam_size=1", log=lambda _: None)
  prefixes = []
  for line in free.getvalue().decode("utf-8").splitlines():
    words = line.split()
    last = words[min(1, len(words) - 1)]
    prefixes.append(" ".join(words[:min(1, len(words) - 1)] +
                             [last[:max(1, len(last) // 2)]]))
  assert len(prefixes) == 50
  export_dir = export_run("translate_synthetic", out, data,
                          decode_overrides="beam_size=3",
                          export_dir=str(tmp_path / "export"), version=1,
                          log=lambda _: None)
  went_on = 0
  for saved in (None, export_dir):
    for whole in (True, False):
      target = io.BytesIO()
      run.decode("translate_synthetic", out, data, _reader(sources), target,
                 decode_overrides="beam_size=3", saved_model_dir=saved,
                 prefixes=_reader(prefixes), whole_word_prefixes=whole,
                 log=lambda _: None)
      outputs = target.getvalue().decode("utf-8").splitlines()
      assert len(outputs) == 50
      for output, prefix in zip(outputs, prefixes):
        assert output.startswith(prefix), (output, prefix)
        rest = output[len(prefix):]
        if whole:
          assert rest == "" or rest.startswith(" "), (output, prefix)
        else:
          went_on += bool(rest) and not rest.startswith(" ")
  assert went_on, "no prefix's last word went on without whole words"


def test_prefix_constraint_masks():
  constraint = PrefixConstraint(tf.constant([[5, 6], [0, 0]]))
  state = constraint.start(tf.zeros([2, 3], tf.int32), 2)
  limits = tf.fill([4], 10)
  first = constraint.allowed(state, tf.constant(0), limits, 8).numpy()
  assert first[0].tolist() == [i == 5 for i in range(8)]
  assert first[2].all()                           # no prefix: free
  third = constraint.allowed(state, tf.constant(2), limits, 8).numpy()
  assert third.all()                              # past the prefix: free
  assert constraint.min_limits(state).numpy().tolist() == [3, 3, 1, 1]
  # Whole words: right after the prefix, a word's first piece or EOS.
  starts = [False, False, False, True, False, True, False]   # 7 < 8 ids
  whole = PrefixConstraint(tf.constant([[5, 6], [0, 0]]), starts)
  state = whole.start(tf.zeros([2, 3], tf.int32), 1)
  limits = tf.fill([2], 10)
  after = whole.allowed(state, tf.constant(2), limits, 8).numpy()
  assert after[0].tolist() == [False, True, False, True, False, True, False,
                               False]
  assert after[1].all()                           # no prefix: free
  assert whole.allowed(state, tf.constant(3), limits, 8).numpy().all()


def _reader(lines):
  return LineReader(io.BytesIO("".join(l + "\n" for l in lines)
                               .encode("utf-8")), "lines")


def _synthetic_lines(problem, data, n):
  _, sources, references = split_text(problem, data, "test", n)
  return [f"{s}\t{r}" for s, r in zip(sources, references)]
