#!/bin/bash
# Your own parallel text to a served model, one command at a time: a shared
# subword vocabulary and shards (t2t-datagen, translate_local), training with
# validation BLEU on dev (t2t-trainer), the last checkpoints averaged, test
# (dev where there is no test) decoded and scored with BLEU and chrF, a
# SavedModel for TF Serving, and the first test line translated through it.
#
#   bash recipes/translate_files.sh RAW_DIR SRC TGT DATA_DIR RUN_DIR
#
# RAW_DIR holds train.SRC, train.TGT, dev.SRC, dev.TGT and optionally
# test.SRC, test.TGT: UTF-8 text, one sentence a line, line-aligned.
# The hparams set follows the number of training pairs: under 100,000
# transformer_multi30k (a small pre-norm model, 8,000 pieces), under
# 5,000,000 transformer_base (32,000 pieces), else transformer_big.
# SET and VOCAB choose others; STEPS (default: the set's; under 4 warm-ups,
# the warm-up becomes a quarter of it), MINUTES (stop the
# updates after this many minutes), EVAL_EVERY, SAVE_EVERY, EVAL_LINES (dev
# lines decoded at each evaluation; 0: all), AVERAGE (checkpoints averaged),
# SEED and HPARAMS (overrides) scale it, as the test does.
set -euo pipefail
if [ $# -ne 5 ]; then
  echo "usage: bash recipes/translate_files.sh RAW_DIR SRC TGT DATA_DIR RUN_DIR" >&2
  exit 2
fi
RAW=$1; SRC=$2; TGT=$3; DATA=$4; RUN=$5
fail() { echo "error: $*" >&2; exit 2; }
lines() { awk 'END { print NR }' "$1"; }   # a last line without "\n" counts

# Every input checked before anything is written.
for split in train dev test; do
  for lang in "$SRC" "$TGT"; do
    if [ ! -f "$RAW/$split.$lang" ] && [ "$split" != test ]; then
      fail "$RAW/$split.$lang is missing: RAW_DIR must hold" \
        "train.$SRC, train.$TGT, dev.$SRC, dev.$TGT (test.* optional)"
    fi
  done
  if [ -f "$RAW/$split.$SRC" ] || [ -f "$RAW/$split.$TGT" ]; then
    for lang in "$SRC" "$TGT"; do
      [ -f "$RAW/$split.$lang" ] || fail "$RAW/$split.$lang is missing" \
        "beside $RAW/$split.$([ "$lang" = "$SRC" ] && echo "$TGT" || echo "$SRC")"
    done
    a=$(lines "$RAW/$split.$SRC"); b=$(lines "$RAW/$split.$TGT")
    [ "$a" = "$b" ] || fail "$RAW/$split.$SRC has $a lines but" \
      "$RAW/$split.$TGT has $b: the files must be line-aligned"
    [ "$a" -gt 0 ] || fail "$RAW/$split.$SRC is empty"
    if [ "$split" = train ]; then PAIRS=$a; fi
  fi
done
EVAL_SPLIT=test; [ -f "$RAW/test.$SRC" ] || EVAL_SPLIT=dev

if [ -z "${SET:-}" ]; then
  if [ "$PAIRS" -lt 100000 ]; then SET=transformer_multi30k; SIZE=8000
  elif [ "$PAIRS" -lt 5000000 ]; then SET=transformer_base; SIZE=32000
  else SET=transformer_big; SIZE=32000; fi
fi
VOCAB=${VOCAB:-${SIZE:-32000}}
EVAL_EVERY=${EVAL_EVERY:-1000}
SAVE_EVERY=${SAVE_EVERY:-500}
EVAL_LINES=${EVAL_LINES:-500}
AVERAGE=${AVERAGE:-5}
SEED=${SEED:-1234}
HPARAMS=${HPARAMS:-}
# The set checked (an unknown name: one line with the close ones) before
# anything is written; its warm-up, for a short STEPS below.
WARMUP=$(python3 -c 'import sys
from t2t_keras import registry
try:
  print(registry.hparams(sys.argv[1]).learning_rate_warmup_steps)
except registry.RegistryError as e:
  print(f"error: SET={sys.argv[1]}: {e}", file=sys.stderr)
  sys.exit(2)' "$SET") || exit 2
LIMITS=()
if [ -n "${STEPS:-}" ]; then
  LIMITS+=("--train_steps=$STEPS")
  # A run shorter than 4 warm-ups (STEPS=40, a check) warms up over a
  # quarter of its steps: the paper's rate would still be near 0 at its end.
  if [ "$STEPS" -lt $((4 * WARMUP)) ] && [[ "$HPARAMS" != *warmup* ]]; then
    HPARAMS="learning_rate_warmup_steps=$(( STEPS / 4 > 0 ? STEPS / 4 : 1 ))${HPARAMS:+,$HPARAMS}"
  fi
fi
if [ -n "${MINUTES:-}" ]; then LIMITS+=("--train_minutes=$MINUTES"); fi
echo "train: $PAIRS pairs: hparams set $SET, a $VOCAB-piece vocabulary;" \
  "$EVAL_SPLIT.$SRC is decoded and scored"

step() { echo; echo "\$ $*"; "$@"; }
PROBLEM=translate_local
step t2t-datagen --problem=$PROBLEM --data_dir="$DATA" --raw_data_dir="$RAW" \
  --source_lang="$SRC" --target_lang="$TGT" --vocab_size="$VOCAB"
START=$(date +%s)
step t2t-trainer --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set="$SET" --hparams="$HPARAMS" ${LIMITS[@]+"${LIMITS[@]}"} \
  --local_eval_frequency="$EVAL_EVERY" --save_checkpoints_steps="$SAVE_EVERY" \
  --eval_bleu_lines="$EVAL_LINES" --random_seed="$SEED"
TRAINED=$(( $(date +%s) - START ))
step t2t-avg-all --output_dir="$RUN" --n="$AVERAGE" --avg_dir="$RUN/avg"
step t2t-decoder --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --checkpoint_path="$RUN/avg" --decode_from_file="$RAW/$EVAL_SPLIT.$SRC" \
  --decode_to_file="$RUN/$EVAL_SPLIT.decoded.$TGT"
step t2t-bleu --translation="$RUN/$EVAL_SPLIT.decoded.$TGT" \
  --reference="$RAW/$EVAL_SPLIT.$TGT" --metrics=bleu,chrf --tokenized_lang=
echo
echo "\$ t2t-exporter --problem=$PROBLEM --data_dir=$DATA --output_dir=$RUN" \
  "--checkpoint_path=$RUN/avg --export_dir=$RUN/export"
EXPORTED=$(t2t-exporter --problem=$PROBLEM --data_dir="$DATA" \
  --output_dir="$RUN" --checkpoint_path="$RUN/avg" --export_dir="$RUN/export")
echo "$EXPORTED"
SERVED=${EXPORTED##* }
echo
echo "\$ head -1 $RAW/$EVAL_SPLIT.$SRC | t2t-decoder --saved_model_dir=$SERVED"
head -1 "$RAW/$EVAL_SPLIT.$SRC" | t2t-decoder --saved_model_dir="$SERVED"
echo
echo "training wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations)"
