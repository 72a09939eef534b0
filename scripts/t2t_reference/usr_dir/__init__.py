"""A tensor2tensor problem reading local files (every built-in translation
problem downloads): Multi30k English -> German from $T2T_REFERENCE_DATA
(../shared/data/multi30k), as a user's own --t2t_usr_dir problem would;
and the same with a vocabulary a side (translate_ende_multi30k_separate)."""
import os

from tensor2tensor.data_generators import generator_utils
from tensor2tensor.data_generators import problem
from tensor2tensor.data_generators import text_encoder
from tensor2tensor.data_generators import text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class TranslateEndeMulti30kLocal(text_problems.Text2TextProblem):
  """Multi30k EN -> DE, a 2k SubwordTextEncoder vocabulary shared by both
  sides; train from train.*, dev from val.*."""

  @property
  def approx_vocab_size(self):
    return 2**11

  @property
  def is_generate_per_split(self):
    return True

  @property
  def dataset_splits(self):
    return [{"split": problem.DatasetSplit.TRAIN, "shards": 10},
            {"split": problem.DatasetSplit.EVAL, "shards": 1}]

  def generate_samples(self, data_dir, tmp_dir, dataset_split):
    del data_dir, tmp_dir
    name = "train" if dataset_split == problem.DatasetSplit.TRAIN else "val"
    folder = os.environ["T2T_REFERENCE_DATA"]
    with open(os.path.join(folder, name + ".en"), encoding="utf-8") as src, \
        open(os.path.join(folder, name + ".de"), encoding="utf-8") as tgt:
      for source, target in zip(src, tgt):
        yield {"inputs": source.strip(), "targets": target.strip()}


@registry.register_problem
class TranslateEndeMulti30kSeparate(TranslateEndeMulti30kLocal):
  """The same pairs with one SubwordTextEncoder vocabulary a side, as
  tensor2tensor's translate_enzh problems keep them:
  vocab.NAME.1024.subwords.en and .de (source_vocab_name and
  target_vocab_name), each built from its own side's training text."""

  @property
  def approx_vocab_size(self):
    return 2**10

  @property
  def source_vocab_name(self):
    return "%s.en" % self.vocab_filename

  @property
  def target_vocab_name(self):
    return "%s.de" % self.vocab_filename

  def _side_vocab(self, data_dir, tmp_dir, name, field):
    samples = self.generate_samples(data_dir, tmp_dir,
                                    problem.DatasetSplit.TRAIN)
    return generator_utils.get_or_generate_vocab_inner(
        data_dir, name, self.approx_vocab_size,
        (sample[field] for sample in samples))

  def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
    source = self._side_vocab(data_dir, tmp_dir, self.source_vocab_name,
                              "inputs")
    target = self._side_vocab(data_dir, tmp_dir, self.target_vocab_name,
                              "targets")
    return text_problems.text2text_generate_encoded(
        self.generate_samples(data_dir, tmp_dir, dataset_split), source,
        target)

  def feature_encoders(self, data_dir):
    return {"inputs": text_encoder.SubwordTextEncoder(
                os.path.join(data_dir, self.source_vocab_name)),
            "targets": text_encoder.SubwordTextEncoder(
                os.path.join(data_dir, self.target_vocab_name))}
