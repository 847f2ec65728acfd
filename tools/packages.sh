#!/usr/bin/env bash
# Installs the Debian packages of a set where some are missing (as root on
# Debian/Ubuntu; otherwise prints the apt-get command and fails).
#   run   what building and running need: compilers, the libraries, the Python module's
#         (tools/setup.sh)
#   test      what the tests add: GoogleTest, pytest (tools/test.sh, and CI
#             before it builds every target)
#   examples  matplotlib, with which the Python examples plot (CI; the
#             examples' plot tests skip without it: its 16 packages take about
#             28 s to install, more than the rest of the tests' set)
# Usage: tools/packages.sh run|test|examples
set -euo pipefail
case "${1:-}" in
  run)
    packages=(cmake ninja-build g++ pkg-config libtomlplusplus-dev libmuparser-dev libcli11-dev
              libnetcdf-dev netcdf-bin libgdal-dev libpng-dev libopenmpi-dev openmpi-bin
              pybind11-dev python3-dev python3-numpy python3-xarray python3-netcdf4) ;;
  test)
    packages=(libgtest-dev libgmock-dev python3-pytest) ;;
  examples)
    packages=(python3-matplotlib) ;;
  *)
    echo "usage: tools/packages.sh run|test|examples" >&2
    exit 2 ;;
esac
command -v dpkg-query >/dev/null || exit 0  # not Debian: the packages are the user's to provide
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]} (run as root or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
