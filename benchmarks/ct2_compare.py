"""Our decoder beside its CTranslate2 export on a trained model: sentences/s,
sacreBLEU and the share of lines identical to our decoder's, for our graph
(float32), CTranslate2 float32 and CTranslate2 int8, one after the other in
one process (run it on an otherwise idle machine).

Usage: python benchmarks/ct2_compare.py --model_dir RUN --data_dir DATA
         --problem translate_ende --source_file SRC --reference_file REF
         [--checkpoint_path RUN/avg] [--decode_hparams beam_size=4]
"""

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from t2t_keras import registry
from t2t_keras.decoding.backends.ct2 import Ct2Decoder
from t2t_keras.decoding.backends.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.export.run import export_run
from t2t_keras.metrics.bleu import sacre_bleu
from t2t_keras.models.builder import load_model_from_dir


def timed(decoder, lines):
  decoder.decode(lines[:32])                 # warm-up: tracing, first loads
  start = time.time()
  outputs = decoder.decode(lines)
  return outputs, time.time() - start


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  for name in ("model_dir", "data_dir", "problem", "source_file",
               "reference_file"):
    parser.add_argument("--" + name, required=True)
  parser.add_argument("--checkpoint_path", default=None)
  parser.add_argument("--decode_hparams", default="")
  args = parser.parse_args()
  with open(args.source_file, encoding="utf-8") as f:
    lines = f.read().splitlines()
  with open(args.reference_file, encoding="utf-8") as f:
    references = f.read().splitlines()
  problem = registry.problem(args.problem)
  model, _, _, _ = load_model_from_dir(args.model_dir, args.checkpoint_path)
  hparams = decode_hparams(args.decode_hparams, problem.decode_defaults)
  export_dir = tempfile.mkdtemp(prefix="ct2_")
  export_run(args.problem, args.model_dir, args.data_dir,
             args.checkpoint_path, args.decode_hparams,
             export_dir=export_dir, export_format="ctranslate2",
             log=lambda _: None)
  decoders = [
      ("t2t_keras graph, float32",
       Decoder(model, problem.input_vocab(args.data_dir), hparams,
               target_vocab=problem.target_vocab(args.data_dir))),
      ("CTranslate2 float32", Ct2Decoder(export_dir, args.decode_hparams,
                                         "float32")),
      ("CTranslate2 int8", Ct2Decoder(export_dir, args.decode_hparams,
                                      "int8")),
  ]
  print(f"{len(lines):,} sentences of {args.source_file}; {hparams.beam_size}"
        f" beams, alpha {hparams.alpha}")
  print("| decoder | sentences/s | sacreBLEU | same as ours |")
  print("| --- | --- | --- | --- |")
  ours = None
  for name, decoder in decoders:
    outputs, seconds = timed(decoder, lines)
    ours = ours or outputs
    same = sum(a == b for a, b in zip(outputs, ours)) / len(lines)
    print(f"| {name} | {len(lines) / seconds:.1f} | "
          f"{sacre_bleu(outputs, references)[0]:.2f} | {100 * same:.1f}% |",
          flush=True)


if __name__ == "__main__":
  main()
