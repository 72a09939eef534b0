"""Nothing is lost: one output line per input line for any bytes (files,
pipes, SavedModel), lines end at "\\n" only, n-best lists hold only real
hypotheses, EVALB's rule for mistagged punctuation, tokenized BLEU by hand.
(A killed training run resuming to the unbroken run's weights is
tests/test_resume.py.)"""

import io
import os
import queue
import random
import subprocess
import sys
import threading

import numpy as np
import pytest
import tensorflow as tf

from commands import python
from t2t_keras import registry
from t2t_keras.decoding import beam_search
from t2t_keras.decoding.batching import windows
from t2t_keras.layers.masks import NEG_INF
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.errors import UserError
from t2t_keras.io.lines import LineReader, read_lines
from t2t_keras.metrics import bleu
from t2t_keras.parsing import evalb
from t2t_keras.models.builder import load_model_from_dir

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECODE = "beam_size=2,extra_length=6,max_input_length=64,batch_size=16"


def hostile_lines(count=150, seed=0):
  """Byte strings (without their "\\n") that have broken line handling."""
  rng = random.Random(seed)
  words = ["the", "dog", "sees", "a", "cat", "near", "old", "house", "river",
           "teacher", "helps", "children", "big", "tree", "these"]
  odd = [b"", b"   ", b"\t \t", b"caf\xe9 au lait", b"\xff\xfe\x00bad",
         b"nul\x00inside", b"bell\x07 and esc\x1b[0m", b"cr\rinside",
         b"vt\x0binside", b"ff\x0cinside", "ls\u2028inside".encode(),
         "ps\u2029and nel\x85".encode(), "中文 русский עברית ☃".encode(),
         b"x" * 20000, b"\xe2\x82", b"trailing space ", b"\x1c\x1d\x1e"]
  lines = []
  for i in range(count):
    if i % 3 == 0:
      lines.append(odd[(i // 3) % len(odd)])
    else:
      lines.append(" ".join(rng.choice(words) for _ in range(
          rng.randint(1, 12))).encode())
  return lines


def write_hostile(path, lines):
  with open(path, "wb") as f:
    f.write(b"\n".join(lines) + b"\n")


def command(name, *args, stdin=None):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run(python("-m", f"t2t_keras.bin.{name}", *args),
                        input=stdin, capture_output=True, cwd=REPO, env=env,
                        timeout=900, check=False)


def test_line_reader_splits_on_newline_only():
  data = b"a\rb\r\nc\x0bd\x0ce\xe2\x80\xa8f\n\xe9t\xe9\n\nlast"
  reader = LineReader(io.BytesIO(data), "x.txt")
  assert list(reader) == ["a\rb", "c\x0bd\x0ce\u2028f", "\ufffdt\ufffd", "",
                          "last"]
  assert (reader.lines, reader.bad_lines, reader.first_bad) == (5, 1, 3)
  assert "x.txt" in reader.report() and "line 3" in reader.report()


def test_a_pipe_is_ready_while_a_line_waits_and_windows_end_there():
  read, write = os.pipe()
  with os.fdopen(read, "rb") as stream:
    reader = LineReader(stream, "stdin")
    lines = iter(reader)
    os.write(write, b"one\ntwo\nthr")
    assert reader.ready()
    assert next(lines) == "one" and reader.ready()   # "two" is buffered
    assert next(lines) == "two"
    assert not reader.ready()        # "thr" waits for the rest of its line
    os.write(write, b"ee\n")
    assert reader.ready()
    assert next(lines) == "three" and not reader.ready()
    os.write(write, b"\xef\xbb\xbffour")
    os.close(write)
    assert reader.ready() and list(lines) == ["four"] and reader.ready()
  assert reader.lines == 4
  with open(__file__, "rb") as f:   # a file never pauses
    assert LineReader(f, "f").ready()
  # Windows of 3 that end early where ``ready`` says the input pauses.
  pauses = iter([True, False, True, True, True, False, True])
  got = list(windows(range(8), 3, lambda: next(pauses)))
  assert got == [[0, 1], [2, 3, 4], [5, 6], [7]]
  assert list(windows(range(8), 3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_scorers_name_the_bad_line(tmp_path):
  path = tmp_path / "hyp.de"
  path.write_bytes(b"gut\nschlecht \xe9\n")
  with pytest.raises(UserError, match=r"hyp.de line 2: byte 0xe9"):
    read_lines(str(path))
  result = subprocess.run(
      [sys.executable, "-m", "t2t_keras.bin.t2t_bleu",
       f"--translation={path}", f"--reference={path}"], capture_output=True,
      text=True, cwd=REPO, timeout=300, check=False)
  assert result.returncode == 2
  assert result.stderr.strip().splitlines()[-1].startswith(
      "error: ") and "line 2" in result.stderr


@pytest.fixture(scope="module")
def hostile(trained_run, tmp_path_factory):
  root = tmp_path_factory.mktemp("hostile")
  lines = hostile_lines()
  path = str(root / "hostile.en")
  write_hostile(path, lines)
  data, out = trained_run
  model, _, _, _ = load_model_from_dir(out)
  vocab = registry.problem("translate_synthetic").vocab(data)
  decoder = Decoder(model, vocab, decode_hparams(DECODE))
  with open(path, "rb") as f:
    texts = list(LineReader(f, path))
  alone = [decoder.decode([t])[0].replace("\n", " ").replace("\r", " ")
           for t in texts]
  # The order checks mean something only if outputs differ between inputs.
  assert len(set(alone)) >= 20, set(alone)
  return path, lines, alone, trained_run, root


def test_hostile_file_to_file(hostile):
  path, lines, alone, (data, out), root = hostile
  target = str(root / "out_file.de")
  result = command("t2t_decoder", "--problem=translate_synthetic",
                   f"--data_dir={data}", f"--output_dir={out}",
                   f"--decode_hparams={DECODE}", f"--decode_from_file={path}",
                   f"--decode_to_file={target}", "--window_lines=70")
  assert result.returncode == 0, result.stderr[-3000:]
  with open(target, "rb") as f:
    written = f.read().decode("utf-8").split("\n")
  assert written[-1] == "" and written[:-1] == alone
  assert len(written) - 1 == len(lines) == 150
  stderr = result.stderr.decode()
  assert "not UTF-8" in stderr and "first: line 10" in stderr   # hostile[9]
  assert "cut to that length" in stderr


def test_hostile_stdin_to_stdout(hostile):
  path, _, alone, (data, out), _ = hostile
  with open(path, "rb") as f:
    result = command("t2t_decoder", "--problem=translate_synthetic",
                     f"--data_dir={data}", f"--output_dir={out}",
                     f"--decode_hparams={DECODE}", stdin=f.read())
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.decode("utf-8").split("\n")[:-1] == alone


def test_each_line_is_answered_while_stdin_stays_open(hostile):
  """A program that keeps t2t-decoder open writes a line and reads its
  answer before it writes the next: the window (1,000 lines) ends where
  the input pauses."""
  path, lines, alone, (data, out), _ = hostile
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  process = subprocess.Popen(
      python("-m", "t2t_keras.bin.t2t_decoder", "--problem=translate_synthetic",
             f"--data_dir={data}", f"--output_dir={out}",
             f"--decode_hparams={DECODE}"), stdin=subprocess.PIPE,
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env)
  answers = queue.Queue()
  threading.Thread(target=lambda: [answers.put(line) for line in
                                   process.stdout], daemon=True).start()
  try:
    for i in (1, 2, 4):
      process.stdin.write(lines[i] + b"\n")
      process.stdin.flush()
      assert answers.get(timeout=120).decode("utf-8") == alone[i] + "\n"
  finally:
    process.stdin.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, stderr[-3000:]
  assert "decoded 3 line(s)" in stderr and answers.empty()


def test_hostile_through_a_saved_model(hostile):
  path, lines, _, (data, out), root = hostile
  export = command("t2t_exporter", "--problem=translate_synthetic",
                   f"--data_dir={data}", f"--output_dir={out}",
                   f"--decode_hparams={DECODE}",
                   f"--export_dir={root / 'export'}", "--export_version=1")
  assert export.returncode == 0, export.stderr[-3000:]
  with open(path, "rb") as f:
    result = command("t2t_decoder",
                     f"--saved_model_dir={root / 'export' / '1'}",
                     stdin=f.read())
  assert result.returncode == 0, result.stderr[-3000:]
  outputs = result.stdout.decode("utf-8").split("\n")
  assert outputs[-1] == "" and len(outputs) - 1 == len(lines)


def test_nbest_lists_hold_only_real_hypotheses(trained_run):
  data, out = trained_run
  model, _, _, _ = load_model_from_dir(out)
  vocab = registry.problem("translate_synthetic").vocab(data)
  sentences = ["the dog sees a cat", "a teacher helps these children", "old"]
  inputs = [vocab.encode(s) + [1] for s in sentences]
  longest = max(map(len, inputs))
  ids, scores = beam_search(
      model, tf.constant([i + [0] * (longest - len(i)) for i in inputs]),
      beam_size=4, alpha=0.6, extra_length=6, nbest=True)
  ids, scores = ids.numpy(), scores.numpy()
  for row in range(len(sentences)):
    assert len({tuple(h) for h in ids[row]}) == 4          # distinct
    assert (scores[row] > NEG_INF / 2).all()               # all real
    assert list(scores[row]) == sorted(scores[row], reverse=True)
  decoder = Decoder(model, vocab,
                    decode_hparams("beam_size=4,return_beams=true,"
                                   "extra_length=6"))
  for nbest in decoder.decode(sentences):
    assert len(nbest) == 4 and all(s > -1e8 for _, s in nbest)
  # Where fewer than K hypotheses exist (a limit of one token: EOS alone),
  # the list is shorter, never padded with filler.
  short = Decoder(model, vocab, decode_hparams(
      "beam_size=4,return_beams=true,extra_length=0")).decode([""])
  assert len(short[0]) == 1 and short[0][0][1] > -1e8


def test_evalb_decides_punctuation_by_the_gold_tags():
  gold = "(S (NP (DT The) (NN dog)) (VP (VBZ barks) (ADVP (RB loudly))) (. .))"
  # "." mistagged NN and attached inside VP; NP too wide.
  test = "(S (NP (DT The) (NN dog) (VBZ barks)) (VP (RB loudly) (NN .)))"
  result = evalb.evaluate([gold], [test])
  assert result["errors"] == []
  counts = result["all"]
  # Gold: S[0,4] NP[0,2] VP[2,4] ADVP[3,4]; test: S[0,4] NP[0,3] VP[3,4]
  # ("." deleted by the gold tag in both); S matches.
  assert (counts.matched, counts.gold, counts.test) == (1, 4, 3)
  p, r, f = counts.scores()
  assert (round(p, 2), round(r, 2), round(f, 2)) == (33.33, 25.0, 28.57)
  # A gold word the prediction tags as punctuation is still a word.
  counts = evalb.evaluate(["(S (NP (NNP John)) (VP (VBZ runs)) (. .))"],
                          ["(S (NP (, John)) (VP (VBZ runs)) (. .))"])["all"]
  assert (counts.matched, counts.gold, counts.test) == (3, 3, 3)


def test_tokenized_bleu_by_hand():
  # Tokens: hyp  Das Haus ##AT##-##AT## Boot ist groß .        (7)
  #         ref  Das Haus ##AT##-##AT## Boot ist sehr groß .   (8)
  # n-gram precisions 7/7, 5/6, 3/5, 2/4; brevity penalty exp(1 - 8/7).
  expected = 100 * np.exp(1 - 8 / 7) * (1 * 5 / 6 * 3 / 5 * 2 / 4) ** 0.25
  score = bleu.tokenized_bleu(["Das Haus-Boot ist groß."],
                              ["Das Haus-Boot ist sehr groß."])
  assert score == pytest.approx(expected, abs=1e-6)
  assert round(expected, 2) == 61.3
