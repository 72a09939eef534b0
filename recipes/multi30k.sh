#!/bin/bash
# The paper in miniature on real text: EN->DE on Multi30k with
# transformer_multi30k on 2 CPU cores (4 + 4 layers, d_ff 512, pre-norm,
# an average of the weights, dropout inside the sub-layers, twice the
# paper's learning rate, label smoothing 0.2, mixed bfloat16 where the CPU
# has bfloat16 units; HPARAMS=norm_position=post for the paper's post-norm),
# then the last checkpoints averaged, test_2016_flickr decoded with beam
# search, and three BLEU figures. Settings were chosen on val only.
#
# Its budget is 60 minutes of training on a CPU whose float32 matmul peak is
# 433 GFLOP/s: the recipe measures this machine's peak P first and prints
# the budget here, 60 x 433 / P minutes, and at the end the wall time beside
# it. The updates stop at 6,000 steps or when the clock reaches the budget
# less a minute for the trainer's start, whichever comes first, so the
# recipe is within its budget on any CPU. HALF=1 is the half-time setting:
# 4,000 steps or half the budget, and the last checkpoint's weights (the
# moving average) decoded alone rather than averaged with four before it
# (chosen on val: docs/experiments.md).
#
#   bash recipes/multi30k.sh [MULTI30K_DIR] [DATA_DIR] [RUN_DIR]
#
# MULTI30K_DIR holds train.{en,de}, val.{en,de}, test_2016_flickr.{en,de}
# (default ../shared/data/multi30k). STEPS, EVAL_EVERY, SAVE_EVERY,
# EVAL_LINES, AVERAGE and HPARAMS (extra overrides) scale it down, as the
# test does; VOCAB is the joint vocabulary's size (default 8,000 pieces; a
# new size needs a new DATA_DIR, which datagen says); BPE_DROPOUT writes
# copies of the training pairs segmented with BPE-dropout of that
# probability (default 0: none; a new DATA_DIR too); LOWERCASE=1 lowercases
# all text (the vocabulary does it; the small-data papers' data, whose
# lowercase tokenized BLEU it is to be compared with; a new DATA_DIR too);
# SEED sets the random seed (default 1234, the trainer's).
# PEAK_SIZE is the side of the timed product (default 4096; the test's is
# small). HPARAMS_SET picks another set. DECODE: the test decode's hparams
# (default alpha=1.5, the length penalty chosen on val: beam 4 with the
# paper's alpha 0.6 left outputs 4.8% shorter than the references there);
# validation during training keeps the paper's alpha 0.6.
set -euo pipefail
SRC=${1:-../shared/data/multi30k}
DATA=${2:-/tmp/t2t_data/multi30k}
RUN=${3:-/tmp/t2t_train/multi30k}
HALF=${HALF:-0}
if [ "$HALF" = 1 ]; then MINUTES=30; STEPS=${STEPS:-4000}; AVERAGE=${AVERAGE:-1}
else MINUTES=60; STEPS=${STEPS:-6000}; fi
HPARAMS_SET=${HPARAMS_SET:-transformer_multi30k}
EVAL_EVERY=${EVAL_EVERY:-500}
SAVE_EVERY=${SAVE_EVERY:-200}
EVAL_LINES=${EVAL_LINES:-0}
HPARAMS=${HPARAMS:-}
AVERAGE=${AVERAGE:-5}
SEED=${SEED:-1234}
VOCAB=${VOCAB:-8000}
BPE_DROPOUT=${BPE_DROPOUT:-0}
CASE=; if [ "${LOWERCASE:-0}" = 1 ]; then CASE=--lowercase; fi
DECODE=${DECODE:-alpha=1.5}
PROBLEM=translate_ende

step() { echo; echo "\$ $*"; "$@"; }

echo "\$ t2t-analyze --matmul_peak --budget_minutes=$MINUTES"
PEAK=$(t2t-analyze --matmul_peak --budget_minutes="$MINUTES" \
  --matmul_size="${PEAK_SIZE:-4096}")
echo "$PEAK"
BUDGET=$(echo "$PEAK" | awk '/^training budget/ { print $NF }')
LIMIT=$(awk -v b="$BUDGET" 'BEGIN { printf "%.1f", (b > 10) ? b - 1 : b * 0.9 }')

step t2t-datagen --problem=$PROBLEM --data_dir="$DATA" --raw_data_dir="$SRC" \
  --raw_prefixes="train=train,dev=val,test=test_2016_flickr" \
  --vocab_size="$VOCAB" --bpe_dropout="$BPE_DROPOUT" $CASE
START=$(date +%s)
step t2t-trainer --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set="$HPARAMS_SET" --hparams="$HPARAMS" \
  --train_steps="$STEPS" --train_minutes="$LIMIT" \
  --local_eval_frequency="$EVAL_EVERY" \
  --eval_bleu_lines="$EVAL_LINES" --save_checkpoints_steps="$SAVE_EVERY" \
  --random_seed="$SEED"
TRAINED=$(( $(date +%s) - START ))
step t2t-avg-all --output_dir="$RUN" --n="$AVERAGE" --avg_dir="$RUN/avg"
step t2t-decoder --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/avg" --decode_split=test --decode_hparams="$DECODE" \
  --decode_to_file="$RUN/test_2016_flickr.decoded"
step t2t-bleu --translation="$RUN/test_2016_flickr.decoded" \
  --reference="$SRC/test_2016_flickr.de" --tokenized_lang=de
echo
echo "training wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations); budget $BUDGET min:" \
  "$(awk -v t="$TRAINED" -v b="$BUDGET" \
       'BEGIN { if (t <= b * 60) print "within it"; else print "over it" }')"
