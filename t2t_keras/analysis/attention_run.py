"""What t2t-attention runs: attention pictures for sentences of a trained run.

For sentence k (1-based) it writes ``OUT/sentence_k/<kind>_layer<l>_head<h>.png``
(l and h count from 1) and, for all sentences, ``OUT/attention.html``.
"""

import os

from t2t_keras import registry
from t2t_keras.analysis.attention import AttentionReader
from t2t_keras.analysis.page import render_page
from t2t_keras.analysis.pictures import write_heatmaps
from t2t_keras.data.vocab_check import check_run_vocab
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.errors import UserError
from t2t_keras.io import files
from t2t_keras.models.builder import load_model_from_dir

PAGE = "attention.html"


def attention_pictures(problem_name, model_dir, data_dir, sources, out_dir,
                       targets=None, checkpoint_path=None,
                       decode_overrides="", log=print):
  """Writes the pictures and the page for ``sources`` (strings); each is
  paired with the model's translation, or with ``targets[k]`` (forced).
  Returns the path of the HTML page."""
  if not sources:
    raise UserError("no sentence to show: give --sentence or a non-empty "
                    "--decode_from_file")
  if targets is not None and len(targets) != len(sources):
    raise UserError(f"{len(sources)} source sentence(s) but {len(targets)} "
                    "target(s): give one target per source")
  problem = registry.problem(problem_name).for_data(data_dir)
  vocabs = problem.input_vocab(data_dir), problem.target_vocab(data_dir)
  check_run_vocab(vocabs, data_dir, model_dir, checkpoint_path)
  # float32 whatever the run trained in: the pictures' weights at full
  # precision; speed does not matter for a few sentences.
  model, _, _, path = load_model_from_dir(model_dir, checkpoint_path,
                                          activation_dtype="float32")
  decode = decode_hparams(decode_overrides, problem.decode_defaults)
  reader = AttentionReader(model, vocabs[0], decode, target_vocab=vocabs[1])
  log(f"attention of {path}, beam {decode.beam_size}"
      if targets is None else f"attention of {path}, forced targets")
  all_maps = []
  for k, source in enumerate(sources):
    maps = reader.read(source, None if targets is None else targets[k])
    names = write_heatmaps(maps, os.path.join(out_dir, f"sentence_{k + 1}"))
    log(f"sentence {k + 1}: {source!r} -> {maps.target!r}: {len(names)} "
        f"pictures in {os.path.join(out_dir, f'sentence_{k + 1}')}")
    all_maps.append(maps)
  page = os.path.join(out_dir, PAGE)
  files.write_text(page, render_page(
      all_maps, title=f"Attention: {problem_name}, "
      f"{os.path.basename(path)}"))
  log(f"page: {page}")
  return page
