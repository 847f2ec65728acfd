#!/usr/bin/env bash
# Installs the Debian packages shallows builds and runs with (tools/packages.sh
# run: when run as root on Debian/Ubuntu and something is missing; the tests'
# packages come with tools/test.sh), then configures build/ and builds
# what running needs: the library, the shallows command and the Python
# package (build/python: the system's python3 finds it with
# PYTHONPATH=build/python). tools/test.sh builds the tests into the same build/.
#
# The CUDA backend is built where it can run or where asked: an nvidia-smi
# that answers, SHALLOWS_CUDA=ON in the environment, or --cuda. Elsewhere
# it is left out, which halves the first build on a machine without a GPU.
# Other arguments go to cmake (e.g. -DCMAKE_CUDA_ARCHITECTURES=90).
#
# Usage: tools/setup.sh [--cuda] [cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=${SHALLOWS_CUDA:-}
args=()
for a in "$@"; do
  if [ "$a" = --cuda ]; then cuda=ON; else args+=("$a"); fi
done
tools/packages.sh run
# nvcc is often installed outside PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
if [ -z "$cuda" ]; then
  # A GPU that answers: CUDA where nvcc is found (AUTO), for that GPU.
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; else cuda=OFF; fi
fi
echo "setup: CUDA backend $cuda (SHALLOWS_CUDA=ON or --cuda builds it without a GPU)"
# A first configure leaves the tests out (tools/test.sh turns them on), so that it needs no test package.
[ -f build/CMakeCache.txt ] || args=(-DSHALLOWS_TESTS=OFF ${args[@]+"${args[@]}"})
cmake --preset release -DSHALLOWS_CUDA="$cuda" ${args[@]+"${args[@]}"}
targets=(shallows_cli)
python=OFF
if grep -q '^SHALLOWS_HAVE_PYTHON:INTERNAL=ON' build/CMakeCache.txt; then targets+=(shallows_python); python=ON; fi
cmake --build --preset release --target "${targets[@]}"
if [ "$python" = ON ]; then
  echo "setup: Python package in build/python; for the system's python3: export PYTHONPATH=$PWD/build/python"
fi
