#!/bin/bash
# What a machine with GPUs gives, in at most LIMIT seconds (default 480),
# through the t2t-* commands as a user runs them:
#   bash benchmarks/gpu_check.sh [WORK_DIR]
# 1. the GPUs TensorFlow sees (without one: one line, exit 2) and the
#    bfloat16 matmul peak of one (t2t-analyze --matmul_peak: chained
#    products on the device, no host copy);
# 2. transformer_base trained for STEPS updates on translate_synthetic under
#    MirroredStrategy over every visible GPU (activation_dtype=auto:
#    bfloat16 from compute capability 8.0): steady target tokens/s and MFU
#    against the measured peak and the GPU's published one (H100/H200,
#    A100), printed as soon as training ends (benchmarks/gpu_check.py);
# 3. beam-4 decoding of the 1,000-sentence test split: target tokens/s and
#    sentences/s timed after 4 batches of warm-up (decode_speed.py), then
#    t2t-decoder's output scored;
# 4. a SavedModel export, reloaded by t2t-decoder, translating a line.
# Each figure is appended to WORK_DIR/figures.txt the moment it is known, so
# a run stopped at its limit (exit 124) still leaves those it had. Its
# figures go to docs/performance.md ("GPUs"). ON_CPU=1 runs the same steps
# on the CPU, to check the script where no GPU is at hand (its figures mean
# nothing); SET, STEPS, BATCH (tokens a GPU) and WARMUP scale it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LIMIT=${LIMIT:-480}
if [ -z "${GPU_CHECK_TIMED:-}" ]; then
  # The whole script under one bound: SIGTERM at LIMIT (the trainer saves
  # and stops), SIGKILL 30 s later.
  GPU_CHECK_TIMED=1 exec timeout --kill-after=30 "$LIMIT" bash "$0" "$@"
fi
WORK=${1:-/tmp/t2t_gpu_check}
SET=${SET:-transformer_base}
STEPS=${STEPS:-600}
BATCH=${BATCH:-8192}
WARMUP=${WARMUP:-400}

if [ "${ON_CPU:-}" = 1 ]; then GPUS="1 CPU (ON_CPU=1: a check of this script)"
else GPUS=$(python "$HERE/gpu_check.py" gpus) || exit 2; fi
echo "$GPUS"
N=${GPUS%% *}
rm -rf "$WORK" && mkdir -p "$WORK"
FIGURES="$WORK/figures.txt"
figure() { echo "$*" | tee -a "$FIGURES"; }
step() { echo; echo "\$ $*"; "$@"; }
START=$(date +%s)
figure "devices: $GPUS"
step t2t-analyze --matmul_peak --matmul_size=8192 | tee "$WORK/peak.log"
figure "peak: $(tail -1 "$WORK/peak.log")"
step t2t-datagen --problem=translate_synthetic --data_dir="$WORK/data"
step t2t-trainer --problem=translate_synthetic --data_dir="$WORK/data" \
  --output_dir="$WORK/run" --hparams_set="$SET" \
  --hparams="batch_size=$BATCH,learning_rate_warmup_steps=$WARMUP" \
  --train_steps="$STEPS" \
  --local_eval_frequency="$STEPS" --save_checkpoints_secs=0 \
  --save_checkpoints_steps="$STEPS" --noeval_bleu | tee "$WORK/train.log"
echo
MFU=$(python "$HERE/gpu_check.py" mfu "$SET" "$WORK/data" \
  "$WORK/train.log" "$WORK/peak.log" "$N" "$GPUS") \
  || MFU="training: no MFU (gpu_check.py said why above)"
figure "$MFU"
step t2t-decoder --problem=translate_synthetic --data_dir="$WORK/data" \
  --output_dir="$WORK/run" --decode_split=test \
  --decode_to_file="$WORK/test.decoded" --decode_hparams=beam_size=4 \
  2>&1 | tee "$WORK/decode.log"
python "$HERE/decode_speed.py" --trained_only --model_dir="$WORK/run" \
  --data_dir="$WORK/data" --problem=translate_synthetic --split=test \
  --sentences=1000 --warmup=4 | tee "$WORK/decode_speed.log"
figure "decoding, beam 4, batch 32, after 4 batches of warm-up: $(awk 'END {
  print $NF " target tokens/s, " $(NF-1) " sentences/s" }' "$WORK/decode_speed.log")"
step t2t-bleu --translation="$WORK/test.decoded" \
  --reference="$WORK/test.decoded.targets" --tokenized_lang=
step t2t-exporter --problem=translate_synthetic --data_dir="$WORK/data" \
  --output_dir="$WORK/run" --export_dir="$WORK/export"
VERSION=$(ls "$WORK/export" | sort -n | tail -1)
SENTENCE="the big dogs see a small cat near these old houses"
echo; echo "\$ echo \"$SENTENCE\" | t2t-decoder --saved_model_dir=$WORK/export/$VERSION"
SERVED=$(echo "$SENTENCE" | t2t-decoder --saved_model_dir="$WORK/export/$VERSION")
[ -n "$SERVED" ] || { echo "gpu_check: the SavedModel translated nothing" >&2; exit 1; }
figure "SavedModel: \"$SENTENCE\" -> \"$SERVED\""

echo; echo "== gpu_check: $GPUS"
cat "$FIGURES"
echo "wall time: $(( $(date +%s) - START )) s"
