"""t2t-bleu: BLEU, chrF and TER of a translation file against a reference
file, as sacreBLEU computes them, and the paper's tokenized BLEU."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
flags.DEFINE_string("translation", None, "The system's output, one a line.")
flags.DEFINE_string("reference", None, "The reference, line-aligned.")
flags.DEFINE_string("metrics", "bleu,chrf",
                    "sacreBLEU metrics to print, comma-separated, from bleu, "
                    "chrf, ter (each with its signature).")
flags.DEFINE_string("tokenized_lang", "de",
                    "Language of the Moses tokenizer for the paper's "
                    "tokenized BLEU; empty: skip that score.")


MODES = modes.Modes("t2t-bleu", exclusive=(
    modes.Mode("as given", frozenset({"translation", "reference",
                                      "metrics"})),
), additive=(
    modes.Mode("with bleu in --metrics", frozenset({"tokenized_lang"}),
               when=lambda f: "bleu" in f.metrics.replace(" ", "").split(","),
               off=("--metrics=chrf",)),
))


def main():
  common.require(FLAGS, "translation", "reference")
  from t2t_keras.io.lines import read_lines
  from t2t_keras.metrics import bleu
  metrics = bleu.parse_metrics(FLAGS.metrics)
  hypotheses = read_lines(FLAGS.translation)
  references = read_lines(FLAGS.reference)
  if len(hypotheses) != len(references):
    raise bleu.LineCountError(
        f"--translation={FLAGS.translation} has {len(hypotheses):,} lines, "
        f"--reference={FLAGS.reference} {len(references):,}: they must be "
        "line-aligned")
  for name in metrics:
    score, signature = bleu.corpus_score(name, hypotheses, references)
    label = bleu.METRICS[name][0]
    detail = "sacreBLEU, detokenized" if name == "bleu" else "sacreBLEU"
    print(f"{label} ({detail}) = {score:.2f}  [{signature}]")
  if FLAGS.tokenized_lang and "bleu" in metrics:
    tokenized = bleu.tokenized_bleu(hypotheses, references,
                                    FLAGS.tokenized_lang)
    print(f"BLEU (tokenized, Moses {FLAGS.tokenized_lang}, compounds split, "
          f"case-sensitive: the paper's EN-DE scoring) = {tokenized:.2f}")
    lowercase = bleu.tokenized_bleu(hypotheses, references,
                                    FLAGS.tokenized_lang, lowercase=True)
    print(f"BLEU (tokenized as above, lowercased: what small-data papers "
          f"report) = {lowercase:.2f}")
  return 0


def run():
  common.run(main, tensorflow=False, modes=MODES)


if __name__ == "__main__":
  run()
