"""What t2t-datagen runs: a registered problem's vocabulary and TFRecords."""

import os
import tempfile

from t2t_keras import registry
from t2t_keras.data.sources import parse_prefixes
from t2t_keras.data.text_problem import DEFAULT_BYTE_BUDGET
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line


def generate(problem_name, data_dir, tmp_dir=None, raw_dir=None,
             raw_prefixes="", byte_budget=DEFAULT_BYTE_BUDGET, log=log_line,
             overwrite=False, **options):
  """Generates ``problem_name``'s data into ``data_dir``.

  Args:
    raw_dir: local files instead of a download (see ``data.sources``).
    raw_prefixes: "train=PATH,dev=PATH,test=PATH" file prefixes in raw_dir.
    byte_budget: bytes of each language's training text for the vocabulary.
    overwrite: first remove what an earlier datagen wrote for this problem
      in ``data_dir`` (made from other files), and make it all again.
    **options: problem options (source_lang, target_lang, vocab_size,
      vocab_model_type, bpe_dropout, bpe_dropout_copies, lowercase); None
      values keep the problem's defaults.
  """
  problem = registry.problem(problem_name).configure(**options)
  tmp_dir = tmp_dir or os.path.join(tempfile.gettempdir(), "t2t_datagen")
  if overwrite and os.path.isdir(data_dir):
    if not hasattr(problem, "remove_data"):
      raise UserError(f"--overwrite: problem {problem.name} writes no data "
                      "of its own to remove")
    removed = problem.remove_data(data_dir)
    log(f"--overwrite: removed the {removed} file(s) an earlier t2t-datagen "
        f"wrote for {problem.name} in {data_dir}")
  problem.generate_data(data_dir, tmp_dir=tmp_dir, raw_dir=raw_dir,
                        raw_prefixes=parse_prefixes(raw_prefixes),
                        byte_budget=byte_budget, log=log)
  return problem
