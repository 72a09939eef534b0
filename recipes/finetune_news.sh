#!/bin/bash
# Fine-tuning in miniature, method by method: the Multi30k model
# (recipes/multi30k.sh) moved to news with t2t-trainer --warm_start_from,
# on the 10,000 WMT news pairs of SHARED_DATA/wmt_train_sample. The news
# sample is Moses-tokenized: it is detokenized (sacremoses) first, so that
# the model learns plain text. newstest2013 is split in two: its first half
# is the dev set (the best checkpoint, and the choice between settings
# with Multi30k val), its second half is only scored. Each row of ROWS is
# one fine-tuning of STEPS steps from the source (docs/training.md says
# what each setting does):
#   news            news alone, a vocabulary over both domains (--warm_start_
#                   vocab=map), the paper's schedule restarted (HPARAMS)
#   mixed           news mixed with the Multi30k pairs by weight (MIX, the
#                   news share, default 0.5), otherwise as news
#   mixed_continue  mixed, --warm_start_schedule=continue
#   mixed_constant  mixed, --warm_start_schedule=constant=0.5
#   mixed_l2        mixed, finetune_l2=L2 (default 0.001; 0.01 lost
#                   news and Multi30k on a full run)
#   mixed_freeze    mixed, finetune_freeze=embeddings for the first 200 steps
#   kept_mixed      mixed with the source's own vocabulary kept
#   chosen          the setting CHOSEN gives, as "DATA SCHEDULE HPARAMS"
#                   (DATA: news, mixed, kept_mixed, or kept_news: news
#                   alone with the source's vocabulary), CHOSEN_STEPS
#                   steps; by default the combination chosen on the dev
#                   half and Multi30k val: "kept_mixed continue", 1,800 steps
#   interpolated    INTERPOLATE="ROW ALPHA": that earlier row's model
#                   moved back toward its start,
#                   ALPHA x its weights + (1 - ALPHA) x the source's
#                   (t2t-avg-all --interpolate; a kept vocabulary's rows
#                   are the source's own, a mapped one's as it was mapped);
#                   "ROW[,ROW...] auto" (default "chosen auto"): each of
#                   those rows at each of ALPHAS (default "0.6 0.7 0.8
#                   0.9") translates the dev half and Multi30k val, and
#                   recipes/finetune_alpha.py picks one row and weight by
#                   the aim on those
# Prints one table (recipes/finetune_table.py): newstest2013's second half
# and Multi30k val (sacreBLEU's BLEU and chrF) for the source and each row,
# whether the row keeps Multi30k val within 1.0 BLEU of the source while
# gaining 80% of news alone's chrF, the Multi30k test2016 figure of the
# chosen row (the last row), and the wall time. A row whose translations
# exist is not run again: the same command with more ROWS adds rows to the
# same run.
#
#   bash recipes/finetune_news.sh [SOURCE_RUN] [SHARED_DATA] [DATA_DIR] \
#       [RUN_DIR]
#
# SOURCE_RUN is the Multi30k run (default /tmp/t2t_train/multi30k; its avg/
# checkpoint is the start; a source trained pre-norm is fine-tuned
# pre-norm); SHARED_DATA holds wmt_train_sample/, wmt14/newstest2013.* and
# multi30k/{train,val,test_2016_flickr}.* (default ../shared/data). Each
# run's best checkpoint by dev BLEU (the first EVAL_LINES dev lines) is
# decoded. STEPS (per fine-tuning), EVAL_EVERY, EVAL_LINES, VOCAB, MIX,
# L2, SEED and HPARAMS (extra overrides) scale it down, as the test does.
set -euo pipefail
SOURCE=${1:-/tmp/t2t_train/multi30k}
SHARED=${2:-../shared/data}
DATA=${3:-/tmp/t2t_data/news_finetune}
RUN=${4:-/tmp/t2t_train/news_finetune}
STEPS=${STEPS:-600}
CHOSEN_STEPS=${CHOSEN_STEPS:-1800}
EVAL_EVERY=${EVAL_EVERY:-200}
EVAL_LINES=${EVAL_LINES:-500}
VOCAB=${VOCAB:-8000}
MIX=${MIX:-0.5}
L2=${L2:-0.001}
SEED=${SEED:-1234}
ROWS=${ROWS:-news mixed mixed_continue mixed_constant mixed_l2 mixed_freeze kept_mixed chosen interpolated}
CHOSEN=${CHOSEN:-kept_mixed continue}
INTERPOLATE=${INTERPOLATE:-chosen auto}
ALPHAS=${ALPHAS:-0.6 0.7 0.8 0.9}
HPARAMS=${HPARAMS:-}
# The restarted schedule (rows without --warm_start_schedule): the paper's
# with a short warm-up, scaled to the source run's peak learning rate
# (0.3 x 256^-0.5 x 100^-0.5 = 0.0019 at step 100).
RESTART=${RESTART:-learning_rate=0.3,learning_rate_warmup_steps=100}
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
join() { local IFS=,; echo "$*" | sed 's/^,*//; s/,*$//; s/,,*/,/g'; }

step() { echo; echo "\$ $*"; "$@"; }

mkdir -p "$DATA/raw" "$RUN/source"
echo "\$ detokenize the news sample (sacremoses) into $DATA/raw/news.{en,de};" \
  "Multi30k train as m30k.{en,de}; newstest2013's first half as dev"
NEWS=$SHARED/wmt14/newstest2013
HALF=$(( $(wc -l < "$NEWS.en") / 2 ))
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
  head -n "$HALF" "$NEWS.$lang" > "$DATA/raw/dev.$lang"
  tail -n +"$(( HALF + 1 ))" "$NEWS.$lang" > "$DATA/raw/rest.$lang"
done
REST=$(awk -v m="$MIX" 'BEGIN { print 1 - m }')
datagen() {   # datagen DIR PREFIXES [VOCAB_SIZE]
  if [ ! -f "$DATA/$1/$PROBLEM.shards.json" ]; then
    step t2t-datagen --problem=$PROBLEM --data_dir="$DATA/$1" \
      --raw_data_dir="$DATA/raw" --vocab_size="${3:-$VOCAB}" \
      --raw_prefixes="$2"
  fi
}
datagen mixed "train=news:$MIX,m30k:$REST,dev=dev"
mkdir -p "$DATA/news" "$DATA/kept_mixed"
cp "$DATA/mixed/vocab.$PROBLEM.$VOCAB.model" "$DATA/news/"
datagen news "train=news,dev=dev"
# The source's own vocabulary, kept: datagen says how well it spells news.
KEPT=$(ls "$SOURCE_DATA"/vocab.$PROBLEM.*.model | head -n 1)
cp "$KEPT" "$DATA/kept_mixed/"
KEPT_SIZE=${KEPT##*.$PROBLEM.}
datagen kept_mixed "train=news:$MIX,m30k:$REST,dev=dev" "${KEPT_SIZE%.model}"
case " $ROWS " in *" chosen "*)
  if [ "${CHOSEN%% *}" = kept_news ]; then
    mkdir -p "$DATA/kept_news"
    cp "$KEPT" "$DATA/kept_news/"
    datagen kept_news "train=news,dev=dev" "${KEPT_SIZE%.model}"
  fi ;;
esac

decode() {   # decode DATA RUN CHECKPOINT INPUT OUTPUT (beam 4, alpha 0.6)
  if [ ! -s "$5" ]; then
    step t2t-decoder --problem=$PROBLEM --data_dir="$1" --output_dir="$2" \
      --checkpoint_path="$3" --decode_from_file="$4" --decode_to_file="$5"
  fi
}
VAL=$SHARED/multi30k/val
TEST=$SHARED/multi30k/test_2016_flickr
# choose_interpolation: INTERPOLATE="ROW[,ROW...] auto" (settings has set
# FROMS): each row at each of ALPHAS blended and translating the dev half
# and Multi30k val; the choice, "ROW ALPHA", written to
# RUN/interpolated/choice.
choose_interpolation() {
  local from a dir candidates=
  for from in ${FROMS//,/ }; do
    settings "$from"
    for a in $ALPHAS; do
      dir=$RUN/interpolated/${from}_alpha_$a
      if [ ! -s "$dir/best/model.json" ]; then
        step t2t-avg-all --output_dir="$RUN/$from" --interpolate="$a" \
          --avg_dir="$dir/best"
        cp "$dir/best/model.json" "$dir/best/hparams.json" "$dir/"
      fi
      decode "$DATA/$KIND" "$dir" "$dir/best" "$DATA/raw/dev.en" "$dir/dev.de"
      decode "$DATA/$KIND" "$dir" "$dir/best" "$VAL.en" "$dir/multi30k_val.de"
      candidates="$candidates $from:$a"
    done
  done
  step python3 "$(dirname "$0")/finetune_alpha.py" "$RUN/interpolated" \
    $candidates --dev="$DATA/raw/dev" --val="$VAL" \
    --source_val="$RUN/source/multi30k_val.de" \
    --out="$RUN/interpolated/choice"
}
decode "$SOURCE_DATA" "$SOURCE" "$SOURCE/avg" "$NEWS.en" "$RUN/source/newstest2013.de"
decode "$SOURCE_DATA" "$SOURCE" "$SOURCE/avg" "$VAL.en" "$RUN/source/multi30k_val.de"

# settings ROW: the row's DATA dir, vocabulary mode, schedule, hparams and
# description.
settings() {
  KIND=mixed; VOCAB_MODE=map; SCHEDULE=restart; EXTRA=; ABOUT=
  ROW_STEPS=$STEPS
  case $1 in
    news) KIND=news; ABOUT="news alone, schedule restarted" ;;
    mixed) ABOUT="news:$MIX + Multi30k:$REST, schedule restarted" ;;
    mixed_continue) SCHEDULE=continue; ABOUT="mixed, schedule continued" ;;
    mixed_constant) SCHEDULE=constant=0.5
      ABOUT="mixed, constant rate 0.5 x the source's last" ;;
    mixed_l2) EXTRA=finetune_l2=$L2; ABOUT="mixed, finetune_l2=$L2" ;;
    mixed_freeze) EXTRA=finetune_freeze=embeddings,finetune_freeze_steps=200
      ABOUT="mixed, embeddings frozen 200 steps" ;;
    kept_mixed) KIND=kept_mixed; VOCAB_MODE=same
      ABOUT="mixed, the source's vocabulary kept" ;;
    chosen) read -r KIND SCHEDULE EXTRA <<< "$CHOSEN"
      case $KIND in news|mixed|kept_mixed|kept_news) ;; *)
        echo "error: CHOSEN='$CHOSEN': expected 'DATA SCHEDULE HPARAMS'" \
          "with DATA one of news, mixed, kept_mixed, kept_news" >&2
        exit 2 ;; esac
      case $KIND in kept_*) VOCAB_MODE=same ;; esac
      ROW_STEPS=$CHOSEN_STEPS
      ABOUT="$KIND, $SCHEDULE${EXTRA:+, $EXTRA}, $ROW_STEPS steps" ;;
    interpolated) read -r FROMS ALPHA <<< "$INTERPOLATE"
      for FROM in ${FROMS//,/ }; do
        case " $ROWS " in *" $FROM interpolated"*|*" $FROM "*" interpolated"*)
          ;; *) echo "error: INTERPOLATE='$INTERPOLATE': expected 'ROW" \
            "ALPHA' or 'ROW,ROW,... auto' with each ROW a row of ROWS" \
            "before interpolated" >&2
          exit 2 ;; esac
      done
      case $FROMS in *,*) if [ "$ALPHA" != auto ]; then
        echo "error: INTERPOLATE='$INTERPOLATE': several rows are chosen" \
          "between on dev: 'ROW,ROW,... auto'" >&2
        exit 2; fi ;; esac
      FROM=${FROMS%%,*}
      if [ "$ALPHA" = auto ] && [ -s "$RUN/interpolated/choice" ]; then
        read -r FROM ALPHA < "$RUN/interpolated/choice"
        settings "$FROM"
        ABOUT="$FROM's weights x $ALPHA (chosen on dev from"
        ABOUT="$ABOUT ${FROMS//,/, } x ${ALPHAS// /, })"
      else settings "$FROM"; ABOUT="$FROM's weights x $ALPHA"; fi
      ABOUT="$ABOUT + the source's x (1 - $ALPHA)" ;;
    *) echo "error: ROWS: unknown row $1; expected news, mixed," \
         "mixed_continue, mixed_constant, mixed_l2, mixed_freeze," \
         "kept_mixed, chosen or interpolated" >&2; exit 2 ;;
  esac
  if [ "$SCHEDULE" = restart ]; then EXTRA=$(join "$RESTART" "$EXTRA"); fi
}
FROM=; ALPHA=   # set by the interpolated row alone
for row in $ROWS; do settings "$row"; done   # every name checked first

START=$(date +%s)
DESCRIBED="source=the Multi30k model, not fine-tuned"
LAST=
for row in $ROWS; do
  settings "$row"
  DESCRIBED="$DESCRIBED;$row=$ABOUT"
  LAST=$row
  if [ "$row" = interpolated ] && [ "$ALPHA" = auto ]; then
    choose_interpolation
    settings "$row"
    DESCRIBED="${DESCRIBED%;*};$row=$ABOUT"
  fi
  CANDIDATE=$RUN/$row/${FROM}_alpha_$ALPHA
  if [ "$row" = interpolated ] && [ ! -s "$RUN/$row/multi30k_val.de" ] &&
     [ -s "$CANDIDATE/multi30k_val.de" ]; then
    # Chosen on dev: the candidate's model and translations; only
    # newstest2013's second half is left to translate.
    cp -r "$CANDIDATE/best" "$CANDIDATE/model.json" "$CANDIDATE/hparams.json" \
      "$RUN/$row/"
    decode "$DATA/$KIND" "$CANDIDATE" "$CANDIDATE/best" "$DATA/raw/rest.en" \
      "$CANDIDATE/rest.de"
    cat "$CANDIDATE/dev.de" "$CANDIDATE/rest.de" > "$RUN/$row/newstest2013.de"
    cp "$CANDIDATE/multi30k_val.de" "$RUN/$row/"
  elif [ "$row" = interpolated ] && [ ! -s "$RUN/$row/multi30k_val.de" ]; then
    step t2t-avg-all --output_dir="$RUN/$FROM" --interpolate="$ALPHA" \
      --avg_dir="$RUN/$row/best"
    cp "$RUN/$row/best/model.json" "$RUN/$row/best/hparams.json" "$RUN/$row/"
  elif [ ! -s "$RUN/$row/multi30k_val.de" ]; then
    step t2t-trainer --problem=$PROBLEM --data_dir="$DATA/$KIND" \
      --output_dir="$RUN/$row" --hparams_set=transformer_multi30k \
      --hparams="$(join "$HPARAMS" "$EXTRA")" --warm_start_from="$SOURCE/avg" \
      --warm_start_vocab=$VOCAB_MODE --warm_start_schedule=$SCHEDULE \
      --train_steps="$ROW_STEPS" --local_eval_frequency="$EVAL_EVERY" \
      --eval_bleu_lines="$EVAL_LINES" --save_checkpoints_steps="$EVAL_EVERY" \
      --random_seed="$SEED"
  fi
  decode "$DATA/$KIND" "$RUN/$row" "$RUN/$row/best" "$NEWS.en" \
    "$RUN/$row/newstest2013.de"
  decode "$DATA/$KIND" "$RUN/$row" "$RUN/$row/best" "$VAL.en" \
    "$RUN/$row/multi30k_val.de"
done
TRAINED=$(( $(date +%s) - START ))
settings "$LAST"
decode "$DATA/$KIND" "$RUN/$LAST" "$RUN/$LAST/best" "$TEST.en" \
  "$RUN/$LAST/test_2016_flickr.de"
decode "$SOURCE_DATA" "$SOURCE" "$SOURCE/avg" "$TEST.en" \
  "$RUN/source/test_2016_flickr.de"

echo
python3 "$(dirname "$0")/finetune_table.py" "$RUN" source $ROWS \
  --news="$NEWS" --val="$VAL" --chosen="$LAST" --test="$TEST" \
  --descriptions="$DESCRIBED"
echo
echo "fine-tuning wall time: $((TRAINED / 60)) min $((TRAINED % 60)) s" \
  "(the rows run by this command: t2t-trainer with its dev evaluations," \
  "and their decoding)"
