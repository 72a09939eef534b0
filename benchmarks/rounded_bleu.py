"""What rounding the decoder's weights costs a trained run: BLEU and the
share of lines equal to float32's on the same backend, for
``--decode_hparams=weights=int8`` and ``weights=bfloat16`` beside float32,
decoding a split with t2t-decoder as a user does (TensorFlow; ``--jax``
adds Keras's JAX backend). One table; the matmul peak printed beside it.

    python benchmarks/rounded_bleu.py --problem translate_synthetic \\
      --data_dir DATA --output_dir RUN [--checkpoint_path RUN/best] \\
      [--split test] [--decode_hparams beam_size=4] [--tokenized_lang de]

A problem without splits (``t2t_import``) decodes ``--source_file``
against ``--reference_file`` instead of ``--split``.
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

WEIGHTS = ("float32", "int8", "bfloat16")


def decode(args, weights, folder, jax):
  """The outputs (lines) and the references' path."""
  target = os.path.join(folder, f"{weights}{'_jax' if jax else ''}.txt")
  overrides = ",".join(x for x in (args.decode_hparams,
                                   f"weights={weights}") if x)
  command = [sys.executable, "-m", "t2t_keras.bin.t2t_decoder",
             f"--problem={args.problem}", f"--data_dir={args.data_dir}",
             f"--output_dir={args.output_dir}",
             f"--decode_to_file={target}",
             f"--decode_hparams={overrides}"]
  if args.source_file:
    command.append(f"--decode_from_file={args.source_file}")
  else:
    command.append(f"--decode_split={args.split}")
  if args.checkpoint_path:
    command.append(f"--checkpoint_path={args.checkpoint_path}")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  if jax:
    env.update(KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
  done = subprocess.run(command, capture_output=True, text=True, env=env,
                        check=False)
  if done.returncode != 0:
    raise SystemExit(f"t2t-decoder (weights={weights}) failed: "
                     + done.stderr.strip().splitlines()[-1])
  with open(target, encoding="utf-8") as f:
    return f.read().splitlines(), (args.reference_file
                                   or f"{target}.targets")


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  for name in ("problem", "data_dir", "output_dir"):
    parser.add_argument(f"--{name}", required=True)
  parser.add_argument("--checkpoint_path", default="")
  parser.add_argument("--split", default="test", choices=("dev", "test"))
  parser.add_argument("--source_file", default="",
                      help="decode this file instead of --split")
  parser.add_argument("--reference_file", default="",
                      help="the references of --source_file")
  parser.add_argument("--decode_hparams", default="")
  parser.add_argument("--tokenized_lang", default="",
                      help="BLEU tokenized as the paper's (de), or '' for "
                           "sacreBLEU's")
  parser.add_argument("--jax", action="store_true",
                      help="also decode under KERAS_BACKEND=jax")
  args = parser.parse_args()
  if bool(args.source_file) != bool(args.reference_file):
    parser.error("--source_file and --reference_file go together")
  from t2t_keras.analysis.peak import matmul_peaks
  from t2t_keras.metrics import bleu
  peaks = matmul_peaks(2048)
  print(f"{os.cpu_count()} CPUs; {args.output_dir} "
        f"{args.checkpoint_path or '(latest)'}, "
        f"{args.source_file or args.split}, decode hparams "
        f"'{args.decode_hparams}'; matmul peak (2048^3, TensorFlow): "
        + ", ".join(f"{k} {v / 1e9:.0f}" for k, v in peaks.items())
        + " GFLOP/s")
  print("| weights | backend | BLEU | lines equal to the backend's float32 "
        "lines |")
  print("| --- | --- | --- | --- |")
  with tempfile.TemporaryDirectory() as folder:
    for jax in (False, True) if args.jax else (False,):
      baseline = None   # this backend's float32 lines
      for weights in WEIGHTS:
        lines, references = decode(args, weights, folder, jax)
        with open(references, encoding="utf-8") as f:
          refs = f.read().splitlines()
        score = (bleu.tokenized_bleu(lines, refs, args.tokenized_lang)
                 if args.tokenized_lang else bleu.sacre_bleu(lines, refs)[0])
        if baseline is None:
          baseline = lines
        same = sum(a == b for a, b in zip(lines, baseline))
        print(f"| {weights} | {'JAX' if jax else 'TensorFlow'} | "
              f"{score:.2f} | {same:,} of {len(lines):,} "
              f"({100 * same / len(lines):.1f}%) |", flush=True)


if __name__ == "__main__":
  main()
