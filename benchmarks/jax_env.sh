#!/bin/bash
# Keras for benchmarks/train_speed_jax.py on a machine with JAX but neither
# TensorFlow nor internet (a lent GPU machine).
#
#   bash benchmarks/jax_env.sh download [DIR]   # here: keras and its wheels
#   bash benchmarks/jax_env.sh install [DIR]    # there: offline, no TF
#
# then: KERAS_BACKEND=jax python benchmarks/train_speed_jax.py
# DIR defaults to benchmarks/wheels (git-ignored; carry it to the machine);
# PYVER (default 3.12, the lent GPU machines' python3) is the Python version
# of the machine that installs.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${2:-benchmarks/wheels}
KERAS=$(python3 -c 'import keras; print(keras.__version__)' 2>/dev/null \
        || echo 3.15.1)
case "${1:-}" in
  download)
    # Pure-Python wheels plus those of the target (CPython 3.x, manylinux);
    # numpy and JAX are the machine's own.
    python3 -m pip download -q --dest "$DIR" "keras==$KERAS" \
        --only-binary=:all: --python-version "${PYVER:-3.12}" \
        --platform manylinux2014_x86_64
    rm -f "$DIR"/numpy-*.whl
    ls "$DIR" ;;
  install)
    python3 -m pip install -q --no-index --find-links "$DIR" keras
    # The package (its problems/ and hparams/ folders are namespaced
    # t2t_keras subpackages only once installed), with the machine's own
    # setuptools: offline, pip cannot fetch a build environment.
    python3 -m pip install -q --no-deps --no-build-isolation .
    KERAS_BACKEND=jax python3 -c 'import keras, jax; print("keras", keras.__version__, "jax",
                jax.__version__, jax.devices())' ;;
  *) echo "usage: bash benchmarks/jax_env.sh download|install [DIR]" >&2
     exit 2 ;;
esac
