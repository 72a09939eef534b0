"""t2t-evalb: labelled bracket precision, recall and F1 (EVALB's standard
parameters) of one-tree-per-line files."""

from absl import flags

from t2t_keras.bin import common
from t2t_keras.bin import modes

FLAGS = flags.FLAGS
flags.DEFINE_string("gold_file", None, "Gold trees, one per line.")
flags.DEFINE_string("test_file", None, "Predicted trees, line-aligned.")


MODES = modes.Modes("t2t-evalb", exclusive=(
    modes.Mode("as given", frozenset({"gold_file", "test_file"})),))


def main():
  common.require(FLAGS, "gold_file", "test_file")
  from t2t_keras.io.lines import read_lines
  from t2t_keras.parsing import evalb
  result = evalb.evaluate(read_lines(FLAGS.gold_file),
                          read_lines(FLAGS.test_file))
  for number, reason in result["errors"]:
    print(f"sentence {number}: {reason}; not scored")
  print(f"not scored: {len(result['errors'])} sentence(s)")
  for name, title in (("all", "all sentences"), ("short", "<= 40 words")):
    counts = result[name]
    p, r, f = counts.scores()
    print(f"{title}: {counts.sentences} sentences  precision {p:.2f}  "
          f"recall {r:.2f}  F1 {f:.2f}")
  return 0


def run():
  common.run(main, tensorflow=False, modes=MODES)


if __name__ == "__main__":
  run()
