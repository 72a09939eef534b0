#!/bin/bash
# Fine-tuning in miniature: the Multi30k model (recipes/multi30k.sh) moved
# to news with t2t-trainer --warm_start_from --warm_start_vocab=map, on the
# 10,000 WMT news pairs of SHARED_DATA/wmt_train_sample, newstest2013 as
# dev. The news sample is Moses-tokenized: it is detokenized (sacremoses)
# first, so that the model learns plain text. One vocabulary is built over
# both domains (news and Multi30k's training text) and the source model's
# rows are mapped onto it. Two fine-tunings start from the source model:
# news only, and news mixed with the Multi30k pairs by weight (MIX, the
# news share, default 0.5) against forgetting. Prints newstest2013 and
# Multi30k val (sacreBLEU's BLEU and chrF) for the source model and both
# fine-tunings, and the wall time.
#
#   bash recipes/finetune_news.sh [SOURCE_RUN] [SHARED_DATA] [DATA_DIR] \
#       [RUN_DIR]
#
# SOURCE_RUN is the Multi30k run (default /tmp/t2t_train/multi30k; its avg/
# checkpoint is the start; a source trained pre-norm is fine-tuned
# pre-norm); SHARED_DATA holds wmt_train_sample/, wmt14/newstest2013.* and
# multi30k/{train,val}.* (default ../shared/data). Each run's best
# checkpoint by dev BLEU (newstest2013's first EVAL_LINES lines) is
# decoded. STEPS (per fine-tuning), EVAL_EVERY, EVAL_LINES, VOCAB, MIX,
# SEED and HPARAMS (extra overrides) scale it down, as the test does.
set -euo pipefail
SOURCE=${1:-/tmp/t2t_train/multi30k}
SHARED=${2:-../shared/data}
DATA=${3:-/tmp/t2t_data/news_finetune}
RUN=${4:-/tmp/t2t_train/news_finetune}
STEPS=${STEPS:-600}
EVAL_EVERY=${EVAL_EVERY:-100}
EVAL_LINES=${EVAL_LINES:-500}
VOCAB=${VOCAB:-8000}
MIX=${MIX:-0.5}
SEED=${SEED:-1234}
# The paper's schedule restarted with a short warm-up, scaled to the source
# run's peak learning rate (0.3 x 256^-0.5 x 100^-0.5 = 0.0019 at step 100).
HPARAMS=${HPARAMS:-learning_rate=0.3,learning_rate_warmup_steps=100}
PROBLEM=translate_ende
# What the source run recorded: its norm position (a warm start needs the
# same weights) and its data directory (the decoder reads its vocabulary).
# A missing or damaged file is left to the warm start, which names it.
read -r NORM SOURCE_DATA < <(python3 -c '
import json, os, sys
from t2t_keras.hparams import HParams
run = sys.argv[1]
try:
  norm = HParams.load(os.path.join(run, "hparams.json")).norm_position
  spec = json.load(open(os.path.join(run, "model.json"), encoding="utf-8"))
  print(norm, spec.get("data_dir") or spec["flags"]["data_dir"])
except Exception:
  print("- -")' "$SOURCE" 2>/dev/null)
if [ "$NORM" = pre ]; then HPARAMS="norm_position=pre${HPARAMS:+,$HPARAMS}"; fi

step() { echo; echo "\$ $*"; "$@"; }
score() {   # score NAME TRANSLATION REFERENCE: BLEU and chrF
  echo "$1:"
  t2t-bleu --translation="$2" --reference="$3" --metrics=bleu,chrf --tokenized_lang=
}

mkdir -p "$DATA/raw" "$RUN/source"
echo "\$ detokenize the news sample (sacremoses) into $DATA/raw/news.{en,de};" \
  "Multi30k train as m30k.{en,de}; newstest2013 as dev"
for lang in en de; do
  python3 -c '
import sys
from sacremoses import MosesDetokenizer
detok = MosesDetokenizer(lang=sys.argv[1])
for line in sys.stdin:
  print(detok.detokenize(line.split()))' "$lang" \
    < "$SHARED/wmt_train_sample/wmt15_ende_10k.tok.$lang" \
    > "$DATA/raw/news.$lang"
  cp "$SHARED/multi30k/train.$lang" "$DATA/raw/m30k.$lang"
  cp "$SHARED/wmt14/newstest2013.$lang" "$DATA/raw/dev.$lang"
done
REST=$(awk -v m="$MIX" 'BEGIN { print 1 - m }')
step t2t-datagen --problem=$PROBLEM --data_dir="$DATA/mixed" \
  --raw_data_dir="$DATA/raw" --vocab_size="$VOCAB" \
  --raw_prefixes="train=news:$MIX,m30k:$REST,dev=dev"
mkdir -p "$DATA/news"
cp "$DATA/mixed/vocab.$PROBLEM.$VOCAB.model" "$DATA/news/"
step t2t-datagen --problem=$PROBLEM --data_dir="$DATA/news" \
  --raw_data_dir="$DATA/raw" --vocab_size="$VOCAB" \
  --raw_prefixes="train=news,dev=dev"

decode() {   # decode DATA RUN CHECKPOINT INPUT OUTPUT (beam 4, alpha 0.6)
  step t2t-decoder --problem=$PROBLEM --data_dir="$1" --output_dir="$2" \
    --checkpoint_path="$3" --decode_from_file="$4" --decode_to_file="$5"
}
NEWS=$SHARED/wmt14/newstest2013
VAL=$SHARED/multi30k/val
decode "$SOURCE_DATA" "$SOURCE" "$SOURCE/avg" "$NEWS.en" "$RUN/source/newstest2013.de"
decode "$SOURCE_DATA" "$SOURCE" "$SOURCE/avg" "$VAL.en" "$RUN/source/multi30k_val.de"

START=$(date +%s)
for kind in news mixed; do
  step t2t-trainer --problem=$PROBLEM --data_dir="$DATA/$kind" \
    --output_dir="$RUN/$kind" --hparams_set=transformer_multi30k \
    --hparams="$HPARAMS" --warm_start_from="$SOURCE/avg" \
    --warm_start_vocab=map --train_steps="$STEPS" \
    --local_eval_frequency="$EVAL_EVERY" --eval_bleu_lines="$EVAL_LINES" \
    --save_checkpoints_steps="$EVAL_EVERY" --random_seed="$SEED"
done
TRAINED=$(( $(date +%s) - START ))
for kind in news mixed; do
  decode "$DATA/$kind" "$RUN/$kind" "$RUN/$kind/best" "$NEWS.en" \
    "$RUN/$kind/newstest2013.de"
  decode "$DATA/$kind" "$RUN/$kind" "$RUN/$kind/best" "$VAL.en" \
    "$RUN/$kind/multi30k_val.de"
done

echo
for kind in source news mixed; do
  score "newstest2013, $kind" "$RUN/$kind/newstest2013.de" "$NEWS.de"
done
for kind in source news mixed; do
  score "Multi30k val, $kind" "$RUN/$kind/multi30k_val.de" "$VAL.de"
done
echo
echo "fine-tuning wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(both t2t-trainer runs, including their dev evaluations)"
