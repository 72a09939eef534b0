#!/bin/bash
# Section 6.3 in miniature: English constituency parsing on the Penn
# Treebank sample (files wsj_0001-0159 train, wsj_0160-0179 dev), with the
# 30,830 CRAFT trees (normalized to WSJ's labels) mixed 1:1 into training,
# with transformer_parsing_small on 2 CPU cores (pre-norm, P_drop 0.2, an
# average of the weights, mixed bfloat16 where the CPU has bfloat16 units;
# HPARAMS=norm_position=post for the paper's post-norm). Trees are
# linearized by parsing_wsj: the words as leaves and the brackets in order,
# each constituent's first child before its opening bracket (TREE_ORDER=
# top-down for Vinyals et al.'s order, which needs its own data and run
# directories), and every search is constrained to well-formed trees over
# exactly the input words. HPARAMS=alignment_loss_weight=0.5 adds guided
# alignment: ahead early, level at the end, so worth it on CPUs that
# train few steps in the hour (docs/experiments.md).
# It trains for the hour: the updates stop after 59 minutes (MINUTES), so
# that the trainer, its start-up and last evaluation included, ends within
# 60 minutes on any CPU; STEPS (30,000) is only a ceiling. The paper's
# learning rate does not depend on the step budget, so a run stopped by the
# clock is the run a smaller STEPS would have made.
# The trainer decodes dev at each evaluation (constrained greedy search)
# and keeps the checkpoint of the best EVALB F1; then the last checkpoints
# are averaged, dev is decoded with the paper's beam 21 and alpha 0.3, and
# scored with EVALB.
#
#   bash recipes/parsing_wsj.sh [PTB_DIR] [DATA_DIR] [RUN_DIR]
#
# PTB_DIR holds nltk_treebank_sample/wsj_0001-0179.{ids,trees} and
# craft_treebank/craft.trees (default ../shared/data/ptb). CRAFT=W mixes
# CRAFT's trees at weight W against WSJ's 1 (default 1; CRAFT=0: WSJ only,
# with its own data and run directories). MINUTES, STEPS, EVAL_EVERY, SAVE_EVERY,
# AVERAGE, VOCAB, SEED, HPARAMS (extra overrides) and DECODE (decode hparams
# for validation and the dev decoding, e.g. beam_size=2,extra_length=20)
# scale it down, as the test does; another MODEL has its own run
# directory.
set -euo pipefail
SRC=${1:-../shared/data/ptb}
CRAFT=${CRAFT:-1}
PROBLEM=parsing_wsj
TREE_ORDER=${TREE_ORDER:-in-order}
MODEL=${MODEL:-transformer}
NAME=$PROBLEM$([ "$TREE_ORDER" != in-order ] && echo "_topdown" || true)
NAME=$NAME$([ "$CRAFT" != 0 ] && echo "_craft$CRAFT" || true)
DATA=${2:-/tmp/t2t_data/$NAME}
RUN=${3:-/tmp/t2t_train/$NAME$([ "$MODEL" != transformer ] && echo "_$MODEL" || true)}
MINUTES=${MINUTES:-59}
STEPS=${STEPS:-30000}
EVAL_EVERY=${EVAL_EVERY:-500}
SAVE_EVERY=${SAVE_EVERY:-200}
AVERAGE=${AVERAGE:-5}
VOCAB=${VOCAB:-4000}
SEED=${SEED:-1}
HPARAMS=${HPARAMS:-}
DECODE=${DECODE:-}
WSJ=$SRC/nltk_treebank_sample/wsj_0001-0179

step() { echo; echo "\$ $*"; "$@"; }

# The split by file: wsj_NNNN.mrg with NNNN <= 0159 trains, the rest is dev.
mkdir -p "$DATA/raw"
echo "\$ split $WSJ.trees by file into $DATA/raw/{train,dev}.trees"
paste "$WSJ.ids" "$WSJ.trees" | awk -F'\t' -v raw="$DATA/raw" '
  { n = substr($1, 5, 4) + 0
    print $3 > (raw "/" (n <= 159 ? "train" : "dev") ".trees") }'
TRAIN=train
if [ "$CRAFT" != 0 ]; then
  ln -sf "$(cd "$SRC/craft_treebank" && pwd)/craft.trees" "$DATA/raw/craft.trees"
  TRAIN="train:1,craft:$CRAFT"
fi
wc -l "$DATA/raw/"*.trees

step t2t-datagen --problem="$PROBLEM" --data_dir="$DATA" \
  --raw_data_dir="$DATA/raw" --raw_prefixes="train=$TRAIN,dev=dev" \
  --vocab_size="$VOCAB" --tree_order="$TREE_ORDER"
START=$(date +%s)
step t2t-trainer --problem="$PROBLEM" --data_dir="$DATA" --output_dir="$RUN" \
  --model="$MODEL" --hparams_set=transformer_parsing_small --hparams="$HPARAMS" \
  --train_steps="$STEPS" --train_minutes="$MINUTES" \
  --local_eval_frequency="$EVAL_EVERY" --save_checkpoints_steps="$SAVE_EVERY" \
  --random_seed="$SEED" --eval_decode_hparams="$DECODE"
TRAINED=$(( $(date +%s) - START ))
step t2t-avg-all --output_dir="$RUN" --n="$AVERAGE" --avg_dir="$RUN/avg"
START=$(date +%s)
step t2t-decoder --problem="$PROBLEM" --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/avg" --decode_split=dev --decode_hparams="$DECODE" \
  --decode_to_file="$RUN/dev.trees"
DECODED=$(( $(date +%s) - START ))
step t2t-evalb --gold_file="$DATA/raw/dev.trees" --test_file="$RUN/dev.trees"
echo
echo "training wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations);" \
  "dev decoding: $((DECODED / 60)) min $((DECODED % 60)) s"
