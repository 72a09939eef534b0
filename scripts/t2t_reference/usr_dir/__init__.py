"""A tensor2tensor problem reading local files (every built-in translation
problem downloads): Multi30k English -> German from $T2T_REFERENCE_DATA
(../shared/data/multi30k), as a user's own --t2t_usr_dir problem would."""
import os

from tensor2tensor.data_generators import problem
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
