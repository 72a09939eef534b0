#!/bin/bash
# The paper in miniature on real text: EN->DE on Multi30k with
# transformer_multi30k on 2 CPU cores, then the last checkpoints averaged,
# test_2016_flickr decoded with beam search, and three BLEU figures.
# Settings were chosen on val only.
#
#   bash recipes/multi30k.sh [MULTI30K_DIR] [DATA_DIR] [RUN_DIR]
#
# MULTI30K_DIR holds train.{en,de}, val.{en,de}, test_2016_flickr.{en,de}
# (default ../shared/data/multi30k). STEPS, EVAL_EVERY, SAVE_EVERY,
# EVAL_LINES, AVERAGE and HPARAMS (extra overrides) scale it down, as the
# test does; SEED sets the random seed (default 1234, the trainer's).
set -euo pipefail
SRC=${1:-../shared/data/multi30k}
DATA=${2:-/tmp/t2t_data/multi30k}
RUN=${3:-/tmp/t2t_train/multi30k}
STEPS=${STEPS:-4000}
EVAL_EVERY=${EVAL_EVERY:-500}
SAVE_EVERY=${SAVE_EVERY:-200}
EVAL_LINES=${EVAL_LINES:-0}
HPARAMS=${HPARAMS:-}
AVERAGE=${AVERAGE:-5}
SEED=${SEED:-1234}
PROBLEM=translate_ende

step() { echo; echo "\$ $*"; "$@"; }

step t2t-datagen --problem=$PROBLEM --data_dir="$DATA" --raw_data_dir="$SRC" \
  --raw_prefixes="train=train,dev=val,test=test_2016_flickr" --vocab_size=8000
START=$(date +%s)
step t2t-trainer --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set=transformer_multi30k --hparams="$HPARAMS" \
  --train_steps="$STEPS" --local_eval_frequency="$EVAL_EVERY" \
  --eval_bleu_lines="$EVAL_LINES" --save_checkpoints_steps="$SAVE_EVERY" \
  --random_seed="$SEED"
TRAINED=$(( $(date +%s) - START ))
step t2t-avg-all --output_dir="$RUN" --n="$AVERAGE" --avg_dir="$RUN/avg"
step t2t-decoder --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/avg" --decode_split=test \
  --decode_to_file="$RUN/test_2016_flickr.decoded"
step t2t-bleu --translation="$RUN/test_2016_flickr.decoded" \
  --reference="$SRC/test_2016_flickr.de" --tokenized_lang=de
echo
echo "training wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations)"
