#!/bin/bash
# The main job on the embedded default problem, one t2t-* command at a time:
# data, training (with validation BLEU; the best checkpoint is kept), decoding
# the test split with the best checkpoint, its BLEU, an export for TF
# Serving, and a translation of one sentence through the exported
# SavedModel. About 3 minutes on 2 CPU cores.
#
#   bash recipes/quickstart.sh [DATA_DIR] [RUN_DIR]
#
# The learning rate warms up over the first half and then falls to 0 at the
# last step (paper*cosine_decay): with the paper's schedule alone the tiny
# model ended its second half unstable on some CPUs and seeds. SEED sets the
# training seed (default 1234, t2t-trainer's).
set -euo pipefail
DATA=${1:-/tmp/t2t_data/synthetic}
RUN=${2:-/tmp/t2t_train/synthetic}
SEED=${SEED:-1234}
PROBLEM=translate_synthetic
SENTENCE="the big dogs see a small cat near these old houses"

step() { echo; echo "\$ $*"; "$@"; }

step t2t-datagen --problem=$PROBLEM --data_dir="$DATA"
step t2t-trainer --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set=transformer_tiny \
  --hparams="batch_size=2048,learning_rate_warmup_steps=400,learning_rate_schedule=paper*cosine_decay" \
  --train_steps=800 --local_eval_frequency=200 --random_seed="$SEED"
step t2t-decoder --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/best" --decode_split=test \
  --decode_to_file="$RUN/test.decoded"
step t2t-bleu --translation="$RUN/test.decoded" \
  --reference="$RUN/test.decoded.targets" --tokenized_lang=
step t2t-exporter --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/best" --export_dir="$RUN/export"
VERSION=$(ls "$RUN/export" | sort -n | tail -1)
echo
echo "\$ echo \"$SENTENCE\" | t2t-decoder --saved_model_dir=$RUN/export/$VERSION"
TRANSLATION=$(echo "$SENTENCE" | t2t-decoder \
  --saved_model_dir="$RUN/export/$VERSION")
echo
echo "source:      $SENTENCE"
echo "translation: $TRANSLATION   (through the SavedModel $RUN/export/$VERSION)"
