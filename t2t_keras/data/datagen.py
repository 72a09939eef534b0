"""What t2t-datagen runs: a registered problem's vocabulary and TFRecords."""

import contextlib
import os
import tempfile

from t2t_keras import registry
from t2t_keras.data.sources import parse_prefixes
from t2t_keras.data.text_problem import DEFAULT_BYTE_BUDGET
from t2t_keras.errors import UserError
from t2t_keras.io.logs import log_line
from t2t_keras.io.outputs import locked
from t2t_keras.io.staging import StagedFiles


def generate(problem_name, data_dir, tmp_dir=None, raw_dir=None,
             raw_prefixes="", byte_budget=DEFAULT_BYTE_BUDGET, log=log_line,
             overwrite=False, **options):
  """Generates ``problem_name``'s data into ``data_dir``.

  Args:
    raw_dir: local files instead of a download (see ``data.sources``).
    raw_prefixes: "train=PATH,dev=PATH,test=PATH" file prefixes in raw_dir.
    byte_budget: bytes of each language's training text for the vocabulary.
    overwrite: make all of the problem's data again (from other files) in
      a staging folder inside ``data_dir``, and only when it is whole and
      checked swap it in for what an earlier datagen wrote
      (``io.staging``); a stopped or killed run leaves the old data, or
      the new, which the next run of datagen finishes swapping in.
    **options: problem options (source_lang, target_lang, vocab_size,
      vocab_model_type, bpe_dropout, bpe_dropout_copies, lowercase); None
      values keep the problem's defaults.
  """
  problem = registry.problem(problem_name).configure(**options)
  tmp_dir = tmp_dir or os.path.join(tempfile.gettempdir(), "t2t_datagen")
  prefixes = parse_prefixes(raw_prefixes)
  if overwrite and not hasattr(problem, "data_names"):
    raise UserError(f"--overwrite: problem {problem.name} writes no data "
                    "of its own to remove")
  swap = (StagedFiles(data_dir, f"overwrite-{problem.data_name}")
          if hasattr(problem, "data_names") and os.path.isdir(data_dir)
          else None)
  with locked(swap.stage) if swap is not None else contextlib.nullcontext():
    if swap is not None and swap.recover() == "finished":
      log(f"finished the swap of new data into {data_dir} that a stopped "
          "t2t-datagen --overwrite had begun")
    if not (overwrite and swap is not None):
      problem.generate_data(data_dir, tmp_dir=tmp_dir, raw_dir=raw_dir,
                            raw_prefixes=prefixes, byte_budget=byte_budget,
                            log=log)
      return problem
    return _overwrite(problem, swap, data_dir, tmp_dir, raw_dir, prefixes,
                      byte_budget, log)


def _overwrite(problem, swap, data_dir, tmp_dir, raw_dir, prefixes,
               byte_budget, log):
  """``--overwrite``'s transaction (``swap``: its ``StagedFiles``)."""
  # The new data is made and checked beside the old, which goes only when
  # the new is whole: a refusal, a failure or a kill leaves the old data.
  stage = swap.begin()
  try:
    problem.generate_data(stage, tmp_dir=tmp_dir, raw_dir=raw_dir,
                          raw_prefixes=prefixes, byte_budget=byte_budget,
                          log=log)
    problem.check_generated(stage)
  except BaseException:
    swap.abort()
    raise
  old = problem.data_names(data_dir)
  new = swap.commit(old)
  log(f"--overwrite: {len(new)} new file(s) in {data_dir} replace the "
      f"{len(old)} an earlier t2t-datagen wrote for {problem.name}")
  return problem
