#!/bin/bash
# The peers' environments for benchmarks/speed_table.py, beside (never in)
# the package's own: TF Model Garden's Transformer needs TensorFlow 2.20,
# PyTorch is not a dependency of t2t_keras. CTranslate2 is the [ct2] extra
# of the package's own environment.
#
#   bash benchmarks/make_peer_envs.sh [DIR]   # default ~/.cache/t2t_keras
#
# Creates DIR/bench-garden and DIR/bench-torch (each skipped when complete).
set -euo pipefail
DIR=${1:-${T2T_KERAS_CACHE:-$HOME/.cache/t2t_keras}}
PYTHON=${PYTHON:-python3}

make_env() {     # name, pip requirements...
  local venv=$DIR/$1; shift
  if [ -f "$venv/.complete" ]; then echo "$venv: exists"; return; fi
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "$@"
  touch "$venv/.complete"
  echo "$venv: created"
}

make_env bench-garden "tensorflow==2.20.*" "tf-models-official==2.20.*" \
    "tf-keras==2.20.*"
make_env bench-torch "torch==2.15.*" numpy
