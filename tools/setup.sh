#!/usr/bin/env bash
# Installs the Debian packages shallows builds with (when run as root on
# Debian/Ubuntu and something is missing), then configures build/ and builds
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
packages=(cmake ninja-build g++ pkg-config libtomlplusplus-dev libmuparser-dev libcli11-dev
          libnetcdf-dev netcdf-bin libgdal-dev libpng-dev libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin
          pybind11-dev python3-dev python3-numpy python3-xarray python3-netcdf4 python3-pytest python3-matplotlib)
if command -v dpkg-query >/dev/null; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    if [ "$(id -u)" -ne 0 ]; then
      echo "missing packages: ${missing[*]} (run as root or: sudo apt-get install ${missing[*]})" >&2
      exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi
# nvcc is often installed outside PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
if [ -z "$cuda" ]; then
  # A GPU that answers: CUDA where nvcc is found (AUTO), for that GPU.
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; else cuda=OFF; fi
fi
echo "setup: CUDA backend $cuda (SHALLOWS_CUDA=ON or --cuda builds it without a GPU)"
cmake --preset release -DSHALLOWS_CUDA="$cuda" ${args[@]+"${args[@]}"}
targets=(shallows_cli)
python=OFF
if grep -q '^SHALLOWS_HAVE_PYTHON:INTERNAL=ON' build/CMakeCache.txt; then targets+=(shallows_python); python=ON; fi
cmake --build --preset release --target "${targets[@]}"
if [ "$python" = ON ]; then
  echo "setup: Python package in build/python; for the system's python3: export PYTHONPATH=$PWD/build/python"
fi
