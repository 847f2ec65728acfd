#!/usr/bin/env bash
# Runs every test of the build made by tools/setup.sh. Tests that need a GPU
# skip themselves, visibly, where none is present.
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
