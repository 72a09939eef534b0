#!/usr/bin/env bash
# The outputs of every decoding mode for runs, into OUT, for comparing two
# trees' decoding (the same ids and strings before and after a change):
#   bash scripts/decode_agreement.sh TREE OUT SOURCES RUN [RUN ...]
# TREE: a checkout whose t2t_keras decodes (PYTHONPATH), OUT: a new folder,
# SOURCES: source lines, RUN: t2t-trainer output dirs of translate_synthetic
# (the data beside each run's data/ or DATA). Modes: t2t-decoder (graph,
# beam 4 and greedy one sentence a batch), --xla, KERAS_BACKEND=jax, the
# default and --xla SavedModels, and validation's decoder (weights not fixed).
#   diff -r OUT_BEFORE OUT_AFTER    # no output: the same in every mode
set -euo pipefail
TREE=$(cd "$1" && pwd); OUT=$2; SOURCES=$3; shift 3
DATA=${DATA:?set DATA to the data dir of the runs}
export PYTHONPATH=$TREE
mkdir -p "$OUT"
have() { [ -s "$OUT/$name.$1" ]; }   # made by an earlier, stopped call
for RUN in "$@"; do
  name=$(basename "$RUN")
  common=(--problem=translate_synthetic --data_dir="$DATA" --output_dir="$RUN"
          --checkpoint_path="$RUN/best" --decode_from_file="$SOURCES")
  have graph || t2t-decoder "${common[@]}" \
    --decode_to_file="$OUT/$name.graph" 2>/dev/null
  have greedy1 || t2t-decoder "${common[@]}" \
    --decode_hparams=beam_size=1,batch_size=1 \
    --decode_to_file="$OUT/$name.greedy1" 2>/dev/null
  have xla || t2t-decoder "${common[@]}" --xla \
    --decode_to_file="$OUT/$name.xla" 2>/dev/null
  have jax || KERAS_BACKEND=jax t2t-decoder "${common[@]}" \
    --decode_to_file="$OUT/$name.jax" 2>/dev/null
  have jax_greedy1 || KERAS_BACKEND=jax t2t-decoder "${common[@]}" \
    --decode_hparams=beam_size=1,batch_size=1 \
    --decode_to_file="$OUT/$name.jax_greedy1" 2>/dev/null
  for xla in "" "--xla"; do
    have "savedmodel${xla:+_xla}" && continue
    export_dir=$(mktemp -d)
    t2t-exporter --problem=translate_synthetic --data_dir="$DATA" \
      --output_dir="$RUN" --checkpoint_path="$RUN/best" \
      --export_dir="$export_dir" --export_version=1 $xla >/dev/null 2>&1
    t2t-decoder --saved_model_dir="$export_dir/1" \
      < "$SOURCES" > "$OUT/$name.savedmodel${xla:+_xla}" 2>/dev/null
    rm -rf "$export_dir"
  done
  have validation || python - "$RUN" "$DATA" "$SOURCES" \
    "$OUT/$name.validation" <<'PY'
import sys
try:
  from t2t_keras.decoding.backends.decoder import Decoder
except ImportError:   # a tree from before decoding/ had folders
  from t2t_keras.decoding.decoder import Decoder
from t2t_keras.decoding.options import decode_hparams
from t2t_keras.models.builder import load_model_from_dir
from t2t_keras import registry
run, data, sources, out = sys.argv[1:]
model, _, _, _ = load_model_from_dir(run, run + "/best")
problem = registry.problem("translate_synthetic")
decoder = Decoder(model, problem.input_vocab(data), decode_hparams())
lines = open(sources).read().splitlines()
with open(out, "w") as f:
  f.write("".join(line + "\n" for line in decoder.decode(lines)))
PY
done
ls "$OUT"

