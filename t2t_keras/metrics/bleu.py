"""BLEU, two ways, each labelled (section 6.1 reports tokenized BLEU).

- ``sacre_bleu``: detokenized BLEU by sacreBLEU, with its signature: the
  number to compare with other toolkits.
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


def sacre_bleu(hypotheses, references):
  """(score, signature string) of detokenized sacreBLEU."""
  _check(hypotheses, references)
  metric = sacrebleu.metrics.BLEU()
  score = metric.corpus_score(hypotheses, [references])
  return score.score, str(metric.get_signature())


def split_compounds(text):
  return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", text)


def tokenize_like_the_paper(text, lang="de", tokenizer=None):
  if tokenizer is None:
    from sacremoses import MosesTokenizer  # pylint: disable=g-import-not-at-top
    tokenizer = MosesTokenizer(lang=lang)
  return split_compounds(tokenizer.tokenize(text, escape=False,
                                            return_str=True))


def tokenized_bleu(hypotheses, references, lang="de", lowercase=False):
  """BLEU after Moses tokenization and compound splitting, case-sensitive
  (the paper's) or, with ``lowercase``, of lowercased text (what the
  small-data literature, e.g. Multi30k papers, reports)."""
  _check(hypotheses, references)
  from sacremoses import MosesTokenizer  # pylint: disable=g-import-not-at-top
  tokenizer = MosesTokenizer(lang=lang)
  case = str.lower if lowercase else str
  hyp = [case(tokenize_like_the_paper(h, lang, tokenizer)) for h in hypotheses]
  ref = [case(tokenize_like_the_paper(r, lang, tokenizer)) for r in references]
  return sacrebleu.metrics.BLEU(tokenize="none", force=True).corpus_score(
      hyp, [ref]).score
