#!/usr/bin/env bash
# Fuzzes the input readers with libFuzzer (clang from Debian: clang-16,
# libfuzzer-16-dev; tools/setup.sh does not install them, `apt-get install
# clang-16 libfuzzer-16-dev` does), under AddressSanitizer and
# UndefinedBehaviorSanitizer, from the committed seed corpus in fuzz/corpus/.
# Usage: tools/fuzz.sh [SECONDS per harness, default 60]. A crash, a hang
# (over 10 s for one input) or a sanitizer report fails the script and leaves
# the input in build-fuzz/ (add it to fuzz/corpus/ once fixed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cxx=${CXX_FUZZ:-clang++-16}
out=build-fuzz
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc/io)

# The Gmsh reader and the mesh build (OpenMP pragmas ignored: one thread).
"$cxx" "${flags[@]}" -Wno-unknown-pragmas fuzz/gmsh_fuzz.cpp src/io/gmsh.cpp src/io/atomic_file.cpp \
  src/mesh/unstructured/build.cpp -o "$out/gmsh_fuzz"
mkdir -p "$out/corpus-gmsh"
(cd "$out" && ./gmsh_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix=./ corpus-gmsh ../fuzz/corpus/gmsh)
echo "fuzz: gmsh reader and mesh build ran ${seconds} s with no finding"
