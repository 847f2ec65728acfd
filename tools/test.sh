#!/usr/bin/env bash
# Installs the tests' packages where missing (tools/packages.sh test), builds
# the tests into build/ (configured by tools/setup.sh, which this runs first
# where build/ is missing) and runs them, but for the long convergence
# studies and MPI rank sweeps (label slow). Tests that need a GPU skip
# themselves, visibly, where none is present.
#
# Usage: tools/test.sh [ctest arguments...]
#   tools/test.sh -L slow      the slow ones only (any -L/-LE replaces the default -LE slow)
#   tools/test.sh -R Riemann   the fast tests whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/CMakeCache.txt ] || tools/setup.sh
tools/packages.sh test
if grep -q '^SHALLOWS_TESTS:BOOL=OFF' build/CMakeCache.txt; then cmake build -DSHALLOWS_TESTS=ON; fi
cmake --build build
labels=(-LE slow)
for a in "$@"; do
  case "$a" in -L|-LE|--label-regex|--label-exclude|-L*|-LE*) labels=() ;; esac
done
# The tests run side by side, most with OpenMP threads of their own, so there
# are more threads than cores: waiting threads sleep instead of spinning
# (measured: tests 3-8x faster on 2 cores, the same results).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --test-dir build --output-on-failure --no-tests=error -j "$(nproc)" ${labels[@]+"${labels[@]}"} "$@"
