#!/usr/bin/env bash
# Runs every test of the build made by tools/setup.sh. Tests that need a GPU
# skip themselves, visibly, where none is present.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests run side by side, most with OpenMP threads of their own, so there
# are more threads than cores: waiting threads sleep instead of spinning
# (measured: tests 3-8x faster on 2 cores, the same results).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
