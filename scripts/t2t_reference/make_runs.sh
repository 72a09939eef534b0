#!/bin/bash
# Reference runs made by tensor2tensor 1.15.7 itself, which the t2t-import
# tests compare against (tests/fixtures/t2t, written by fixtures.py).
#
#   bash scripts/t2t_reference/make_env.sh          # once
#   bash scripts/t2t_reference/make_runs.sh [WORK]  # datagen, 2 runs, decodes
#
# WORK (default ~/.cache/t2t_keras/ref-runs) gets data/ (the problem's
# vocabulary and TFRecord shards), tiny/ (transformer_tiny at d = 64:
# pre-norm, one matrix for embeddings and softmax), base_v1/
# (transformer_base_v1 cut to 2 layers of d = 64: post-norm, one matrix for
# the embeddings and another for the softmax), relative/
# (transformer_relative_tiny at d = 64: relative positions, no timing
# signal), separate/ (transformer_tiny at d = 64 on
# translate_ende_multi30k_separate: a vocabulary a side), and each run's greedy and beam-4 decodes of the first 20 lines
# of Multi30k's val.en.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-${T2T_KERAS_CACHE:-$HOME/.cache/t2t_keras}/ref-t2t}
WORK=${1:-${T2T_KERAS_CACHE:-$HOME/.cache/t2t_keras}/ref-runs}
SHARED=${SHARED:-$(cd "$HERE/../../.." && pwd)/shared/data}
export T2T_REFERENCE_DATA=$SHARED/multi30k
PROBLEM=translate_ende_multi30k_local
STEPS=${STEPS:-4000}
t2t() { "$VENV/bin/python" "$HERE/launch.py" "$@" --t2t_usr_dir="$HERE/usr_dir"; }
mkdir -p "$WORK"
datagen() {   # problem, data dir
  if [ ! -f "$2/.complete" ]; then
    t2t t2t_datagen --problem="$1" --data_dir="$2" --tmp_dir="$WORK/tmp"
    touch "$2/.complete"
  fi
}
head -20 "$SHARED/multi30k/val.en" > "$WORK/val20.en"

ONLY=${ONLY:-tiny base_v1 relative separate}   # which runs to make
case " $ONLY " in *" tiny "*|*" base_v1 "*|*" relative "*)
  datagen $PROBLEM "$WORK/data" ;; esac

train_and_decode() {   # run name, hparams set, hparams[, steps]
  case " $ONLY " in *" $1 "*) ;; *) return 0 ;; esac
  local run=$WORK/$1
  local PROBLEM=${RUN_PROBLEM:-$PROBLEM} DATA=${RUN_DATA:-$WORK/data}
  if [ ! -f "$run/.complete" ]; then
    t2t t2t_trainer --problem=$PROBLEM --model=transformer \
        --hparams_set="$2" --hparams="$3" --data_dir="$DATA" \
        --output_dir="$run" --train_steps="${4:-$STEPS}" --schedule=train \
        --save_checkpoints_steps=1000 --keep_checkpoint_max=2 \
        --random_seed=1
    touch "$run/.complete"
  fi
  for search in greedy:1 beam4:4; do
    [ -f "$run/decode.${search%%:*}" ] && continue
    t2t t2t_decoder --problem=$PROBLEM --model=transformer \
        --hparams_set="$2" --hparams="$3" --data_dir="$DATA" \
        --output_dir="$run" --decode_from_file="$WORK/val20.en" \
        --decode_to_file="$run/decode.${search%%:*}" \
        --decode_hparams="beam_size=${search##*:},alpha=0.6,batch_size=1"
  done
}

# d = 64 throughout, so that each checkpoint the tests keep is under 2 MiB.
train_and_decode tiny transformer_tiny \
    "hidden_size=64,filter_size=256,batch_size=2048,learning_rate_warmup_steps=1000" 3000
train_and_decode base_v1 transformer_base_v1 \
    "num_hidden_layers=2,hidden_size=64,filter_size=128,num_heads=4,shared_embedding=True,shared_embedding_and_softmax_weights=False,batch_size=2048,learning_rate_warmup_steps=1000" 3000
train_and_decode relative transformer_relative_tiny \
    "hidden_size=64,filter_size=256,batch_size=2048,learning_rate_warmup_steps=1000"
# One vocabulary a side (translate_enzh's layout): vocab.*.subwords.en, .de.
case " $ONLY " in *" separate "*)
  datagen translate_ende_multi30k_separate "$WORK/data_separate" ;; esac
RUN_PROBLEM=translate_ende_multi30k_separate RUN_DATA=$WORK/data_separate \
  train_and_decode separate transformer_tiny \
    "hidden_size=64,filter_size=256,batch_size=2048,learning_rate_warmup_steps=1000" 3000
echo "reference runs in $WORK"
