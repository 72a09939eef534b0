"""What benchmarks/time_to_bleu.py needs done inside eole's environment
(bench-eole: torch, safetensors, sentencepiece), never in t2t_keras's.

  python eole_tools.py vocab SPM_MODEL OUT
      eole's vocabulary file ("piece<TAB>count", most frequent first) of
      every piece of our SentencePiece model except the specials eole adds
      itself (<unk>, <s>, </s>) and our padding: the same pieces, so the
      two toolkits train on the same token sequences.
  python eole_tools.py average OUT_DIR STEP_DIR...
      the element-wise mean of the STEP_DIRs' weights (model.00.safetensors),
      written with a copy of the last STEP_DIR's config and vocabulary into
      OUT_DIR: what t2t-avg-all does for our checkpoints (eole 0.6 has no
      averaging command).
"""

import os
import shutil
import sys

WEIGHTS = "model.00.safetensors"


def vocab(spm_model, out):
  import sentencepiece
  processor = sentencepiece.SentencePieceProcessor(model_file=spm_model)
  with open(out, "w", encoding="utf-8") as f:
    for i in range(processor.get_piece_size()):
      if processor.is_control(i) or processor.is_unknown(i):
        continue                       # <pad>, </s>, <unk>: eole's own
      # Counts only order the file; eole keeps every piece listed.
      f.write(f"{processor.id_to_piece(i)}\t{processor.get_piece_size() - i}\n")


def average(out_dir, step_dirs):
  import torch
  from safetensors.torch import load_file, save_file
  total = None
  for step_dir in step_dirs:
    weights = load_file(os.path.join(step_dir, WEIGHTS))
    if total is None:
      total = {k: v.to(torch.float64) for k, v in weights.items()}
    else:
      for k, v in weights.items():
        total[k] += v.to(torch.float64)
  last = load_file(os.path.join(step_dirs[-1], WEIGHTS))
  mean = {k: (v / len(step_dirs)).to(last[k].dtype).contiguous()
          for k, v in total.items()}
  if os.path.isdir(out_dir):
    shutil.rmtree(out_dir)
  shutil.copytree(step_dirs[-1], out_dir, symlinks=False,
                  ignore=shutil.ignore_patterns(WEIGHTS, "optimizer.pt"))
  save_file(mean, os.path.join(out_dir, WEIGHTS))


if __name__ == "__main__":
  if sys.argv[1:2] == ["vocab"] and len(sys.argv) == 4:
    vocab(sys.argv[2], sys.argv[3])
  elif sys.argv[1:2] == ["average"] and len(sys.argv) >= 4:
    average(sys.argv[2], sys.argv[3:])
  else:
    raise SystemExit(__doc__)
