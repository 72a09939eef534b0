#!/bin/bash
# Fine-tuning in miniature: the Multi30k model (recipes/multi30k.sh) moved
# to news with t2t-trainer --warm_start_from, on the 10,000 WMT news pairs of
# ../shared/data/wmt_train_sample, newstest2013 as dev. Prints newstest2013
# BLEU and Multi30k val BLEU before and after (what the new domain gains,
# and what it costs the old one).
#
#   bash recipes/finetune_news.sh [SOURCE_RUN] [SOURCE_DATA] [SHARED_DATA] \
#       [DATA_DIR] [RUN_DIR]
#
# SOURCE_RUN is the Multi30k run (default /tmp/t2t_train/multi30k; its avg/
# checkpoint is the start, and a source trained pre-norm is fine-tuned
# pre-norm), SOURCE_DATA its data directory (its vocabulary
# is reused: a warm start needs the same one); SHARED_DATA holds
# wmt_train_sample/, wmt14/newstest2013.* and multi30k/val.*. The best
# checkpoint by dev BLEU (newstest2013's first EVAL_LINES lines) is
# decoded. The news sample is Moses-tokenized with escaped characters
# (&apos; ...): they are unescaped, the spaces left. STEPS,
# EVAL_EVERY, EVAL_LINES (dev lines decoded at each evaluation), SEED and
# HPARAMS (extra overrides) scale it down, as the test does.
set -euo pipefail
SOURCE=${1:-/tmp/t2t_train/multi30k}
SOURCE_DATA=${2:-/tmp/t2t_data/multi30k}
SHARED=${3:-../shared/data}
DATA=${4:-/tmp/t2t_data/news_finetune}
RUN=${5:-/tmp/t2t_train/news_finetune}
STEPS=${STEPS:-600}
EVAL_EVERY=${EVAL_EVERY:-100}
EVAL_LINES=${EVAL_LINES:-500}
SEED=${SEED:-1234}
# The paper's schedule restarted with a short warm-up, scaled to the source
# run's peak learning rate (0.3 x 256^-0.5 x 100^-0.5 = 0.0019 at step 100).
HPARAMS=${HPARAMS:-learning_rate=0.3,learning_rate_warmup_steps=100}
PROBLEM=translate_ende
# A source trained pre-norm (HPARAMS=norm_position=pre in its recipe) is
# fine-tuned pre-norm: a warm start needs the same weights.
# (A missing or damaged hparams.json is left to the warm start, which
# names it.)
NORM=$(python3 -c 'import sys; from t2t_keras.hparams import HParams
print(HParams.load(sys.argv[1]).norm_position)' "$SOURCE/hparams.json" \
  2>/dev/null || true)
if [ "$NORM" = pre ]; then HPARAMS="norm_position=pre${HPARAMS:+,$HPARAMS}"; fi

step() { echo; echo "\$ $*"; "$@"; }
bleu() {   # bleu NAME TRANSLATION REFERENCE: the three BLEU lines
  echo "$1:"
  t2t-bleu --translation="$2" --reference="$3" --tokenized_lang=de
}

mkdir -p "$DATA/raw" "$RUN/before"
unescape() {
  sed -e 's/&apos;/'"'"'/g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g' \
      -e 's/&#91;/[/g; s/&#93;/]/g; s/&#124;/|/g; s/&amp;/\&/g' "$1"
}
echo "\$ unescape the news sample into $DATA/raw/train.{en,de}; newstest2013 as dev"
for lang in en de; do
  unescape "$SHARED/wmt_train_sample/wmt15_ende_10k.tok.$lang" \
    > "$DATA/raw/train.$lang"
  cp "$SHARED/wmt14/newstest2013.$lang" "$DATA/raw/dev.$lang"
done
VOCAB=$(ls "$SOURCE_DATA"/vocab.$PROBLEM.*.model 2>/dev/null | head -1 || true)
if [ -z "$VOCAB" ]; then
  echo "error: $SOURCE_DATA holds no vocab.$PROBLEM.*.model: pass the source run's data directory" >&2
  exit 2
fi
VOCAB_SIZE=${VOCAB##*.$PROBLEM.}
cp "$VOCAB" "$DATA/"
step t2t-datagen --problem=$PROBLEM --data_dir="$DATA" \
  --raw_data_dir="$DATA/raw" --raw_prefixes="train=train,dev=dev" \
  --vocab_size="${VOCAB_SIZE%.model}"

decode() {   # decode RUN CHECKPOINT INPUT OUTPUT (beam 4, alpha 0.6)
  step t2t-decoder --problem=$PROBLEM --data_dir="$DATA" --output_dir="$1" \
    --checkpoint_path="$2" --decode_from_file="$3" --decode_to_file="$4"
}
NEWS=$SHARED/wmt14/newstest2013
VAL=$SHARED/multi30k/val
decode "$SOURCE" "$SOURCE/avg" "$NEWS.en" "$RUN/before/newstest2013.de"
decode "$SOURCE" "$SOURCE/avg" "$VAL.en" "$RUN/before/multi30k_val.de"

START=$(date +%s)
step t2t-trainer --problem=$PROBLEM --data_dir="$DATA" --output_dir="$RUN" \
  --hparams_set=transformer_multi30k --hparams="$HPARAMS" \
  --warm_start_from="$SOURCE/avg" --train_steps="$STEPS" \
  --local_eval_frequency="$EVAL_EVERY" --eval_bleu_lines="$EVAL_LINES" \
  --save_checkpoints_steps="$EVAL_EVERY" --random_seed="$SEED"
TRAINED=$(( $(date +%s) - START ))
decode "$RUN" "$RUN/best" "$NEWS.en" "$RUN/newstest2013.de"
decode "$RUN" "$RUN/best" "$VAL.en" "$RUN/multi30k_val.de"

echo
bleu "newstest2013, the Multi30k model" "$RUN/before/newstest2013.de" "$NEWS.de"
bleu "newstest2013, fine-tuned" "$RUN/newstest2013.de" "$NEWS.de"
bleu "Multi30k val, the Multi30k model" "$RUN/before/multi30k_val.de" "$VAL.de"
bleu "Multi30k val, fine-tuned" "$RUN/multi30k_val.de" "$VAL.de"
echo
echo "fine-tuning wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(t2t-trainer, including its dev evaluations)"
