#!/usr/bin/env bash
# Installs the Debian packages shallows builds with (when run as root on
# Debian/Ubuntu and something is missing), then configures and builds into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake ninja-build g++ pkg-config libtomlplusplus-dev libmuparser-dev libcli11-dev
          libnetcdf-dev netcdf-bin libgdal-dev libpng-dev libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin)
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
cmake --preset release "$@"
cmake --build --preset release
