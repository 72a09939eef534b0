"""Translation problems: WMT14 EN-DE and EN-FR as in the paper (section 5.1),
their reverse directions, and any local parallel text."""

from t2t_keras import registry
from t2t_keras.data.sources import TfdsSource
from t2t_keras.data.text_problem import Text2TextProblem


class _WmtProblem(Text2TextProblem):
  """WMT14 from TensorFlow Datasets (newstest2013 dev, newstest2014 test),
  or local files with --raw_data_dir."""

  tfds_name = None

  def default_source(self, tmp_dir):
    return TfdsSource(self.tfds_name, tmp_dir, self.source_lang,
                      self.target_lang)


@registry.register_problem
class TranslateEnde(_WmtProblem):
  """WMT14 English -> German, shared BPE vocabulary of 37,000 (5.1)."""
  source_lang, target_lang = "en", "de"
  vocab_size = 37000
  vocab_model_type = "bpe"
  tfds_name = "wmt14_translate/de-en"


@registry.register_problem
class TranslateEndeRev(TranslateEnde):
  """German -> English on translate_ende's data and vocabulary."""
  reverse = True


@registry.register_problem
class TranslateEnfr(_WmtProblem):
  """WMT14 English -> French with 32,000 word pieces (5.1).

  The pieces come from SentencePiece's unigram model rather than GNMT's
  WordPiece: tensorflow-text's WordPiece drops whitespace and so cannot give
  back the exact string, which the exported model must return.
  """
  source_lang, target_lang = "en", "fr"
  vocab_size = 32000
  vocab_model_type = "unigram"
  tfds_name = "wmt14_translate/fr-en"


@registry.register_problem
class TranslateEnfrRev(TranslateEnfr):
  """French -> English on translate_enfr's data and vocabulary."""
  reverse = True


@registry.register_problem
class TranslateLocal(Text2TextProblem):
  """Any language pair from local files: t2t-datagen --raw_data_dir=DIR
  --source_lang=xx --target_lang=yy [--vocab_size=N] reads DIR/train.xx,
  DIR/train.yy, DIR/dev.*, DIR/test.*."""
  source_lang, target_lang = "src", "tgt"
  vocab_size = 32000
