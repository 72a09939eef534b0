"""Writes tests/fixtures/t2t from the reference runs of make_runs.sh, in
tensor2tensor's own environment (make_env.sh):

    $VENV/bin/python scripts/t2t_reference/fixtures.py WORK SHARED_DATA OUT

OUT gets, all made by tensor2tensor 1.15.7:
  data/        the problem's vocabulary, one training shard and the dev shard
  data_separate/  the same of translate_ende_multi30k_separate (a
               vocabulary a side: vocab.*.subwords.en and .de)
  tiny/, base_v1/, relative/, separate/   each run's flags.txt, hparams.json, its newest
               checkpoint with the model's variables and global_step (the
               Adam slots are left out: they triple the size), and its
               greedy and beam-4 decodes of val20.en
  val20.en     the 20 lines decoded
  ids/         SubwordTextEncoder ids, one line of ids a line of text, of
               newstest2013 EN and DE and Multi30k val EN and DE, under the
               problem's 2k vocabulary and an 8k one built by tensor2tensor
               from the WMT training sample (vocab.wmt_sample.8192.subwords)
"""
import gzip
import itertools
import os
import shutil
import sys

import tensorflow as tf
from tensor2tensor.data_generators import generator_utils
from tensor2tensor.data_generators import text_encoder

PROBLEM = "translate_ende_multi30k_local"
CORPORA = {"newstest2013.en": "wmt14/newstest2013.en",
           "newstest2013.de": "wmt14/newstest2013.de",
           "multi30k_val.en": "multi30k/val.en",
           "multi30k_val.de": "multi30k/val.de"}


def trimmed_checkpoint(run, out):
  """The run's newest checkpoint, model variables and global_step only."""
  path = tf.train.latest_checkpoint(run)
  reader = tf.train.load_checkpoint(path)
  names = sorted(n for n in reader.get_variable_to_shape_map()
                 if n == "global_step" or (
                     n.startswith("transformer/") and "Adam" not in n))
  name = os.path.basename(path)
  tf.raw_ops.SaveV2(prefix=os.path.join(out, name), tensor_names=names,
                    shape_and_slices=[""] * len(names),
                    tensors=[reader.get_tensor(n) for n in names])
  with open(os.path.join(out, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(f'model_checkpoint_path: "{name}"\n'
            f'all_model_checkpoint_paths: "{name}"\n')
  return name


def wmt_sample_vocab(shared, out):
  def lines():
    for lang in ("en", "de"):
      path = os.path.join(shared, f"wmt_train_sample/wmt15_ende_10k.tok.{lang}")
      with open(path, encoding="utf-8") as f:
        yield from (line.strip() for line in f)
  return generator_utils.get_or_generate_vocab_inner(
      out, "vocab.wmt_sample.8192.subwords", 8192, lines())


def main():
  work, shared, out = sys.argv[1:4]
  os.makedirs(os.path.join(out, "data"), exist_ok=True)
  vocab_name = f"vocab.{PROBLEM}.2048.subwords"
  for name in (vocab_name, f"{PROBLEM}-train-00000-of-00010",
               f"{PROBLEM}-dev-00000-of-00001"):
    shutil.copy(os.path.join(work, "data", name), os.path.join(out, "data"))
  shutil.copy(os.path.join(work, "val20.en"), out)
  separate = "translate_ende_multi30k_separate"
  os.makedirs(os.path.join(out, "data_separate"), exist_ok=True)
  for name in (f"vocab.{separate}.1024.subwords.en",
               f"vocab.{separate}.1024.subwords.de",
               f"{separate}-train-00000-of-00010",
               f"{separate}-dev-00000-of-00001"):
    shutil.copy(os.path.join(work, "data_separate", name),
                os.path.join(out, "data_separate"))
  for run in ("tiny", "base_v1", "relative", "separate"):
    folder = os.path.join(out, run)
    shutil.rmtree(folder, ignore_errors=True)   # no older checkpoint left
    os.makedirs(folder)
    for name in ("flags.txt", "hparams.json", "decode.greedy",
                 "decode.beam4"):
      shutil.copy(os.path.join(work, run, name), folder)
    print(run, trimmed_checkpoint(os.path.join(work, run), folder))
  ids = os.path.join(out, "ids")
  os.makedirs(ids, exist_ok=True)
  vocabs = {"multi30k": text_encoder.SubwordTextEncoder(
      os.path.join(work, "data", vocab_name)),
            "wmt_sample": wmt_sample_vocab(shared, ids)}
  for (vname, vocab), (corpus, path) in itertools.product(vocabs.items(),
                                                          CORPORA.items()):
    with open(os.path.join(shared, path), encoding="utf-8") as f:
      # The line as tensor2tensor's decoder reads it: stripped.
      text = "".join(" ".join(map(str, vocab.encode(line.strip()))) + "\n"
                     for line in f)
    # mtime=0: the same ids give the same bytes.
    with open(os.path.join(ids, f"{vname}.{corpus}.ids.gz"), "wb") as g:
      g.write(gzip.compress(text.encode("ascii"), mtime=0))
  print("fixtures in", out)


if __name__ == "__main__":
  main()
