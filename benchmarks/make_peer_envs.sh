#!/bin/bash
# The peers' environments for benchmarks/speed_table.py and
# benchmarks/time_to_bleu.py, beside (never in) the package's own: TF Model
# Garden's Transformer needs TensorFlow 2.20; PyTorch and eole (OpenNMT-py's
# successor, which pins torch < 2.15) are not dependencies of t2t_keras.
# CTranslate2 is the [ct2] extra of the package's own environment.
#
#   bash benchmarks/make_peer_envs.sh [DIR] [NAME...]
#
# DIR defaults to ~/.cache/t2t_keras; NAMEs (garden, torch, eole) pick which
# of DIR/bench-garden, DIR/bench-torch and DIR/bench-eole to make (default:
# all three; each is skipped when complete).
set -euo pipefail
DIR=${1:-${T2T_KERAS_CACHE:-$HOME/.cache/t2t_keras}}
shift || true
NAMES=${*:-garden torch eole}
PYTHON=${PYTHON:-python3}

make_env() {     # name, pip requirements...
  case " $NAMES " in *" ${1#bench-} "*) ;; *) return 0 ;; esac
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
make_env bench-eole "eole==0.6.4" aiohttp   # eole.bin imports aiohttp, undeclared
