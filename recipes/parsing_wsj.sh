#!/bin/bash
# Section 6.3 in miniature: English constituency parsing on the Penn
# Treebank sample (files wsj_0001-0159 train, wsj_0160-0179 dev) with
# transformer_parsing_small on 2 CPU cores, then the last checkpoints
# averaged, dev decoded with beam 21 and alpha 0.3 (the paper's), the trees
# repaired, and EVALB's labelled F1.
#
#   bash recipes/parsing_wsj.sh [PTB_DIR] [DATA_DIR] [RUN_DIR]
#
# PTB_DIR holds nltk_treebank_sample/wsj_0001-0179.{ids,trees} and, for
# CRAFT=1, craft_treebank/craft.trees (default ../shared/data/ptb). CRAFT=1
# adds the 30,830 CRAFT trees to the training data, as the paper added data
# in its semi-supervised setting (its own data and run directories by
# default). STEPS, EVAL_EVERY, SAVE_EVERY, AVERAGE, VOCAB and HPARAMS (extra
# overrides) scale it down, as the test does.
set -euo pipefail
SRC=${1:-../shared/data/ptb}
CRAFT=${CRAFT:-0}
NAME=parsing_wsj$([ "$CRAFT" = 1 ] && echo _craft || true)
DATA=${2:-/tmp/t2t_data/$NAME}
RUN=${3:-/tmp/t2t_train/$NAME}
STEPS=${STEPS:-4000}
EVAL_EVERY=${EVAL_EVERY:-500}
SAVE_EVERY=${SAVE_EVERY:-200}
AVERAGE=${AVERAGE:-5}
VOCAB=${VOCAB:-4000}
HPARAMS=${HPARAMS:-}
WSJ=$SRC/nltk_treebank_sample/wsj_0001-0179

step() { echo; echo "\$ $*"; "$@"; }

# The split by file: wsj_NNNN.mrg with NNNN <= 0159 trains, the rest is dev.
mkdir -p "$DATA/raw"
echo "\$ split $WSJ.trees by file into $DATA/raw/{train,dev}.trees"
paste "$WSJ.ids" "$WSJ.trees" | awk -F'\t' -v raw="$DATA/raw" '
  { n = substr($1, 5, 4) + 0
    print $3 > (raw "/" (n <= 159 ? "train" : "dev") ".trees") }'
if [ "$CRAFT" = 1 ]; then
  echo "\$ cat $SRC/craft_treebank/craft.trees >> $DATA/raw/train.trees"
  cat "$SRC/craft_treebank/craft.trees" >> "$DATA/raw/train.trees"
fi
wc -l "$DATA/raw/train.trees" "$DATA/raw/dev.trees"

step t2t-datagen --problem=parsing_wsj --data_dir="$DATA" \
  --raw_data_dir="$DATA/raw" --raw_prefixes="train=train,dev=dev" \
  --vocab_size="$VOCAB"
START=$(date +%s)
step t2t-trainer --problem=parsing_wsj --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set=transformer_parsing_small --hparams="$HPARAMS" \
  --train_steps="$STEPS" --local_eval_frequency="$EVAL_EVERY" \
  --save_checkpoints_steps="$SAVE_EVERY"
TRAINED=$(( $(date +%s) - START ))
step t2t-avg-all --model_dir="$RUN" --n="$AVERAGE" --output_dir="$RUN/avg"
START=$(date +%s)
step t2t-decoder --problem=parsing_wsj --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/avg" --decode_split=dev \
  --decode_to_file="$RUN/dev.trees"
DECODED=$(( $(date +%s) - START ))
step t2t-evalb --gold_file="$DATA/raw/dev.trees" --test_file="$RUN/dev.trees"
echo
echo "training wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations);" \
  "dev decoding: $((DECODED / 60)) min $((DECODED % 60)) s"
