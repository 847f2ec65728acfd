#!/usr/bin/env bash
# Fuzzes the input readers with libFuzzer (clang from Debian: clang-16,
# libfuzzer-16-dev, libclang-rt-16-dev, libomp-16-dev; tools/setup.sh does not
# install them, `apt-get install clang-16 libfuzzer-16-dev libclang-rt-16-dev
# libomp-16-dev` does), under AddressSanitizer and
# UndefinedBehaviorSanitizer, from the committed seed corpus in fuzz/corpus/.
# Three harnesses: the Gmsh reader with the mesh build, the case reader
# (TOML, expressions, --set overrides) and the ESRI ASCII raster reader.
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
run_flags=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix=./)

# The Gmsh reader and the mesh build (OpenMP pragmas ignored: one thread).
"$cxx" "${flags[@]}" -Wno-unknown-pragmas fuzz/gmsh_fuzz.cpp src/io/gmsh.cpp src/io/atomic_file.cpp \
  src/mesh/unstructured/build.cpp -o "$out/gmsh_fuzz"
mkdir -p "$out/corpus-gmsh"
(cd "$out" && ./gmsh_fuzz -max_total_time="$seconds" "${run_flags[@]}" -max_len=65536 corpus-gmsh ../fuzz/corpus/gmsh)
echo "fuzz: gmsh reader and mesh build ran ${seconds} s with no finding"

# The raster reader.
"$cxx" "${flags[@]}" fuzz/raster_fuzz.cpp src/io/raster.cpp -o "$out/raster_fuzz"
mkdir -p "$out/corpus-raster"
(cd "$out" && ./raster_fuzz -max_total_time="$seconds" "${run_flags[@]}" -max_len=8192 corpus-raster ../fuzz/corpus/raster)
echo "fuzz: raster reader ran ${seconds} s with no finding"

# The case reader (and what it calls: rasters and meshes named by the text
# resolve against fuzz/corpus/raster/, the mesh build, output times).
"$cxx" "${flags[@]}" -fopenmp -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1 fuzz/case_fuzz.cpp \
  src/io/case/*.cpp src/io/time_series.cpp src/io/rain_stack.cpp src/io/raster.cpp src/io/gmsh.cpp src/io/atomic_file.cpp \
  src/mesh/unstructured/build.cpp src/mesh/unstructured/ordering.cpp src/solver/problem.cpp src/solver/capabilities.cpp -ltomlplusplus -lmuparser -o "$out/case_fuzz"
mkdir -p "$out/corpus-case"
(cd "$out" && SHALLOWS_FUZZ_FILES=../fuzz/corpus/raster ./case_fuzz -max_total_time="$seconds" "${run_flags[@]}" \
  -max_len=8192 corpus-case ../fuzz/corpus/case)
echo "fuzz: case reader ran ${seconds} s with no finding"
