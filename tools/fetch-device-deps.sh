#!/usr/bin/env bash
# Unpacks the Debian packages a GPU machine without network or package
# manager needs to build shallows (toml++, CLI11, muParser, GoogleTest,
# pybind11 for the Python module) into .deps/ (git-ignored), to be carried
# along. Run on a Debian 12 machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps && mkdir -p .deps/debs
(cd .deps/debs && apt-get download libtomlplusplus-dev libcli11-dev libmuparser-dev libmuparser2v5 libtomlplusplus3 \
  libgtest-dev libgmock-dev pybind11-dev)
for deb in .deps/debs/*.deb; do dpkg -x "$deb" .deps/root; done
rm -rf .deps/debs
echo "unpacked into .deps/root (use CMAKE_PREFIX_PATH=$PWD/.deps/root/usr)"
