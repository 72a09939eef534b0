#!/bin/bash
# Regenerates t2t_keras/export/tf_serving_ops.txt: the ops TF Serving 2.20
# has (TensorFlow 2.20 and tensorflow-text 2.20, in their own venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TF_SERVING_OPS_VENV:-${HOME}/.cache/t2t_keras/tf-serving-2.20}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tensorflow-cpu==2.20.0 tensorflow-text==2.20.0
fi
TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" scripts/tf_serving_ops.py \
  t2t_keras/export/tf_serving_ops.txt
