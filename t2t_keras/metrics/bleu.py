"""BLEU, two ways, each labelled (section 6.1 reports tokenized BLEU), and
sacreBLEU's chrF and TER.

- ``sacre_bleu``: detokenized BLEU by sacreBLEU, with its signature: the
  number to compare with other toolkits; ``corpus_score``: that, chrF or
  TER (``METRICS``), as sacreBLEU's defaults compute them.
- ``tokenized_bleu``: what the paper's EN-DE numbers used (tensor2tensor's
  get_ende_bleu.sh): Moses tokenization (here its Python port, sacremoses),
  hyphenated compounds split as "a ##AT##-##AT## b", case-sensitive BLEU on
  whitespace tokens (multi-bleu.perl's definition).
"""

import re

import sacrebleu

from t2t_keras.errors import UserError

_COMPOUND = re.compile(r"(\S)-(\S)")


class LineCountError(UserError):
  """Translation and reference files differ in length."""


def _check(hypotheses, references):
  if len(hypotheses) != len(references):
    raise LineCountError(f"{len(hypotheses)} translations but "
                         f"{len(references)} references")


# sacreBLEU's metrics by the names t2t-bleu --metrics and t2t-trainer
# --eval_metric take, with their printed names; TER is lower-is-better.
METRICS = {"bleu": ("BLEU", sacrebleu.metrics.BLEU),
           "chrf": ("chrF", sacrebleu.metrics.CHRF),
           "ter": ("TER", sacrebleu.metrics.TER)}


def parse_metrics(text):
  """"bleu,chrf" -> ("bleu", "chrf"); an unknown name is a UserError."""
  names = tuple(n.strip().lower() for n in text.split(",") if n.strip())
  unknown = [n for n in names if n not in METRICS]
  if unknown or not names:
    raise UserError(f"--metrics={text}: expected names from "
                    f"{', '.join(METRICS)}, comma-separated")
  return names


def corpus_score(name, hypotheses, references):
  """(score, signature string) of sacreBLEU's metric ``name`` (one of
  ``METRICS``) with its default settings, on detokenized text."""
  _check(hypotheses, references)
  metric = METRICS[name][1]()
  score = metric.corpus_score(hypotheses, [references])
  return score.score, str(metric.get_signature())


def sacre_bleu(hypotheses, references):
  """(score, signature string) of detokenized sacreBLEU."""
  return corpus_score("bleu", hypotheses, references)


def split_compounds(text):
  return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", text)


def tokenize_like_the_paper(text, lang="de", tokenizer=None):
  if tokenizer is None:
    from sacremoses import MosesTokenizer
    tokenizer = MosesTokenizer(lang=lang)
  return split_compounds(tokenizer.tokenize(text, escape=False,
                                            return_str=True))


def tokenized_bleu(hypotheses, references, lang="de", lowercase=False):
  """BLEU after Moses tokenization and compound splitting, case-sensitive
  (the paper's) or, with ``lowercase``, of lowercased text (what the
  small-data literature, e.g. Multi30k papers, reports)."""
  _check(hypotheses, references)
  from sacremoses import MosesTokenizer
  tokenizer = MosesTokenizer(lang=lang)
  case = str.lower if lowercase else str
  hyp = [case(tokenize_like_the_paper(h, lang, tokenizer)) for h in hypotheses]
  ref = [case(tokenize_like_the_paper(r, lang, tokenizer)) for r in references]
  return sacrebleu.metrics.BLEU(tokenize="none", force=True).corpus_score(
      hyp, [ref]).score
