#!/bin/bash
# tensor2tensor 1.15.7's own environment, for making the reference runs that
# tests/fixtures/t2t compares t2t-import against (scripts/t2t_reference/
# make_runs.sh). Never a dependency of t2t_keras.
#
#   bash scripts/t2t_reference/make_env.sh [VENV]
#
# VENV defaults to ~/.cache/t2t_keras/ref-t2t. Needs Python 3.11 (TensorFlow
# 2.15.1, the last release with tf.estimator, has no wheel for newer ones).
set -euo pipefail
VENV=${1:-${T2T_KERAS_CACHE:-$HOME/.cache/t2t_keras}/ref-t2t}
PYTHON=${PYTHON:-python3.11}
if [ -f "$VENV/.complete" ]; then echo "$VENV: exists"; exit 0; fi
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip install -q "$@"; }
# gym 0.21.0 (tensor2tensor's rl modules import it; 0.26 breaks the import)
# builds only with an old pip, setuptools and wheel (newer ones refuse its
# "opencv-python>=3." requirement), without build isolation.
pip "pip<24.1" "setuptools<66" "wheel<0.40"
pip "tensorflow==2.15.1" "numpy<2"
pip "tensor2tensor==1.15.7" --no-deps
pip "tensorflow-addons==0.23.0" "tensorflow-probability==0.23.0" "numpy<2" \
    scipy sympy gin-config tf-slim "tensorflow-datasets==4.9.3" \
    "protobuf==4.25.9" "tensorflow-metadata<1.15" "array_record<0.6" \
    "etils<1.8" pillow pypng tqdm bz2file future google-api-python-client \
    oauth2client "tensorflow==2.15.1"
pip "tensorflow-gan==2.1.0" "tensorflow-hub==0.15.0" --no-deps
pip "gym==0.21.0" --no-build-isolation
"$VENV/bin/python" "$(dirname "$0")/launch.py" --check
touch "$VENV/.complete"
echo "$VENV: created"
