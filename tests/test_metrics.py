"""t2t-bleu against the sacrebleu command; EVALB by hand and on itself."""

import os
import subprocess
import sys

import pytest

from t2t_keras.metrics import bleu
from t2t_keras.parsing import evalb

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(module, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run([sys.executable, "-m", module, *args],
                        capture_output=True, text=True, cwd=REPO, env=env,
                        timeout=300, check=False)


@pytest.fixture
def bleu_files(shared_data, tmp_path):
  with open(os.path.join(shared_data, "wmt14", "newstest2013.de"),
            encoding="utf-8") as f:
    references = [line.rstrip("\n") for line in f][:300]
  # A "translation": every third word dropped, some words swapped.
  hypotheses = []
  for i, line in enumerate(references):
    words = [w for j, w in enumerate(line.split()) if (i + j) % 3]
    if i % 2 and len(words) > 2:
      words[0], words[1] = words[1], words[0]
    hypotheses.append(" ".join(words))
  ref, hyp = tmp_path / "ref.de", tmp_path / "hyp.de"
  ref.write_text("\n".join(references) + "\n", encoding="utf-8")
  hyp.write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
  return str(hyp), str(ref)


def test_t2t_bleu_equals_the_sacrebleu_command(bleu_files):
  hyp, ref = bleu_files
  ours = run("t2t_keras.bin.t2t_bleu", f"--translation={hyp}",
             f"--reference={ref}")
  assert ours.returncode == 0, ours.stderr[-2000:]
  theirs = subprocess.run([sys.executable, "-m", "sacrebleu", ref, "-i", hyp,
                           "-b", "-w", "2"], capture_output=True, text=True,
                          check=True)
  line = [l for l in ours.stdout.splitlines()
          if l.startswith("BLEU (sacreBLEU")][0]
  assert line.split("= ")[1].split()[0] == theirs.stdout.strip()
  assert "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp" in line
  tokenized = [l for l in ours.stdout.splitlines()
               if l.startswith("BLEU (tokenized")][0]
  assert 5 < float(tokenized.split("= ")[1]) < 95


def test_chrf_and_ter_equal_sacrebleus_own(bleu_files):
  """--metrics=bleu,chrf,ter prints each as sacrebleu.corpus_chrf and
  corpus_ter compute it, with its signature; the default is bleu,chrf."""
  import sacrebleu
  hyp, ref = bleu_files
  with open(hyp, encoding="utf-8") as f:
    hypotheses = f.read().splitlines()
  with open(ref, encoding="utf-8") as f:
    references = f.read().splitlines()
  ours = run("t2t_keras.bin.t2t_bleu", f"--translation={hyp}",
             f"--reference={ref}", "--metrics=bleu,chrf,ter",
             "--tokenized_lang=")
  assert ours.returncode == 0, ours.stderr[-2000:]
  lines = {l.split(" ")[0]: l for l in ours.stdout.splitlines()}
  assert set(lines) == {"BLEU", "chrF", "TER"}, ours.stdout
  chrf = sacrebleu.corpus_chrf(hypotheses, [references])
  ter = sacrebleu.corpus_ter(hypotheses, [references])
  assert lines["chrF"].split("= ")[1].split()[0] == f"{chrf.score:.2f}"
  assert lines["TER"].split("= ")[1].split()[0] == f"{ter.score:.2f}"
  assert 20 < chrf.score < 95 and 5 < ter.score < 95
  assert "|nc:6|nw:0|space:no|" in lines["chrF"]
  assert "|tok:tercom|" in lines["TER"]
  default = run("t2t_keras.bin.t2t_bleu", f"--translation={hyp}",
                f"--reference={ref}", "--tokenized_lang=")
  assert [l.split(" ")[0] for l in default.stdout.splitlines()] == [
      "BLEU", "chrF"]
  bad = run("t2t_keras.bin.t2t_bleu", f"--translation={hyp}",
            f"--reference={ref}", "--metrics=bleu,meteor")
  assert bad.returncode == 2 and "Traceback" not in bad.stderr
  assert bad.stderr.strip().splitlines()[-1] == (
      "error: --metrics=bleu,meteor: expected names from bleu, chrf, ter, "
      "comma-separated")


def test_tokenized_bleu_pieces():
  assert bleu.split_compounds("Anti-Terror-Gesetz") == (
      "Anti ##AT##-##AT## Terror ##AT##-##AT## Gesetz")
  assert bleu.split_compounds("a - b") == "a - b"
  same = ["Das ist ein Test-Satz.", "Noch einer, oder?"]
  assert bleu.tokenized_bleu(same, same) == pytest.approx(100.0)
  shouted = [s.upper() for s in same]
  assert bleu.tokenized_bleu(shouted, same) < 10
  assert bleu.tokenized_bleu(shouted, same, lowercase=True) == \
      pytest.approx(100.0)
  with pytest.raises(bleu.LineCountError, match="2 translations but 1"):
    bleu.sacre_bleu(same, same[:1])


def test_evalb_by_hand():
  gold = "( (S (NP-SBJ (DT the) (NN dog)) (VP (VBZ barks)) (. .)) )"
  test = "(S (NP (DT the)) (VP (NN dog) (VBZ barks)) (. .))"
  result = evalb.evaluate([gold], [test])
  counts = result["all"]
  # Gold: S[0,3] NP[0,2] VP[2,3]; test: S[0,3] NP[0,1] VP[1,3]; "." deleted.
  assert (counts.matched, counts.gold, counts.test) == (1, 3, 3)
  p, r, f = counts.scores()
  assert (round(p, 2), round(r, 2), round(f, 2)) == (33.33, 33.33, 33.33)


def test_evalb_conventions():
  # PRT == ADVP, function tags stripped, -NONE- and its empty NP deleted.
  gold = ("(S (NP-SBJ (-NONE- *)) (VP (VB look) (PRT (RP up)) "
          "(NP (DT the) (NN word))))")
  test = "(S (VP (VB look) (ADVP (RP up)) (NP (DT the) (NN word))))"
  counts = evalb.evaluate([gold], [test])["all"]
  assert counts.scores() == (100.0, 100.0, 100.0)
  assert counts.gold == 4                      # S, VP, PRT, NP
  # Words that differ are reported, not scored.
  result = evalb.evaluate([gold], ["(S (VB look) (RP down) (DT the) (NN word))"])
  assert result["errors"] == [(1, "words differ from the gold tree's")]
  assert result["all"].sentences == 0


def test_evalb_sample_against_itself_and_cli(shared_data):
  path = os.path.join(shared_data, "ptb", "nltk_treebank_sample",
                      "wsj_0001-0179.trees")
  with open(path, encoding="utf-8") as f:
    lines = [l.rstrip("\n") for l in f]
  result = evalb.evaluate(lines, lines)
  assert result["all"].sentences == 3669 and not result["errors"]
  assert result["all"].scores() == (100.0, 100.0, 100.0)
  assert 0 < result["short"].sentences < 3669
  cli = run("t2t_keras.bin.t2t_evalb", f"--gold_file={path}",
            f"--test_file={path}")
  assert cli.returncode == 0, cli.stderr[-2000:]
  assert "all sentences: 3669 sentences  precision 100.00  recall 100.00  " \
      "F1 100.00" in cli.stdout
