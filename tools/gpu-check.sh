#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU, CUDA and CMake but no Debian
# packages or network, builds shallows, runs every test (the GPU tests must
# run, not skip), runs compute-sanitizer on a small case, runs the GPU
# benchmarks and prints a short table last.
#
# Before: run tools/fetch-device-deps.sh on a Debian 12 machine; it fills
# .deps/ (toml++, CLI11, muParser, GoogleTest), which must travel with the
# checkout.
#
# Usage: tools/gpu-check.sh [STAGE...]     (no stage: all of them, in order)
#   build     configure (CUDA arch $CUDA_ARCH, default 90) and build with ninja
#   test      every ctest test (CPU ones with $CPU_THREADS OpenMP threads, then
#             the GPU ones, label "backend"); fails if a GPU test skipped
#   gputest   the GPU tests only
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck, synccheck on a small case
#   cli       shallows run --backend cuda on the built-in case, on S003-T3 (roe3, 100²) and on the Gmsh
#             mesh case cases/river-bend, against --backend cpu
#   forcing   the valley example on GPU and CPU, first and third order (water account and tracer mass of each);
#             S004-T1 8192^2 on `shallows run` (cell-updates/s over the stepping): plain; with rain, Green-Ampt
#             and a Manning map; the same with volume sources, or a tide side (each also on the plain kernels,
#             SHALLOWS_CUDA_KERNEL=plain), or two passive scalars (also on the plain kernels). FORCING_LABELS picks
#             the S004-T1 rows (default: all), FORCING_VALLEY=0 leaves out the valley runs
#   runpath   S004-T1 8192^2 on `shallows run` with an output every ~200 steps (a gauge alone: no maxima; VTK:
#             maxima tracked), against `shallows bench` on the same grid: cell-updates/s over the stepping, and
#             their ratio
#   variants  S004-T1 at 4096^2 and 8192^2 with both kernels (lagged, plain)
#   bench     S004-T1 at 1024^2..8192^2 and S004-T2 at 4096^2 (skip on/off, time per
#             step against the wet area), default kernel
#   s000      S000-T1 at Q4 to t = 5 s and Q5 to t = 0.1 s (seed 000 Table 1)
#   roe3      S003-T3, third order against first order, 50^2..8192^2 (seed 003 Table 3)
#   mesh      S004-T1 on perturbed triangle meshes of 1M, 4M, 16M cells (MESH_CELLS, millions), numbered
#             at random, by RCM and by Z-order, cell and edge loops, float and double; S004-T2 at 4M
#   meshskip  dry skipping on meshes: S004-T2 on 4M triangles (RCM, Z-order), time per step against the wet area,
#             GPU and CPU (MESHSKIP_CELLS, MESHSKIP_WINDOWS, MESHSKIP_STEPS, MESHSKIP_CPU_STEPS)
#   meshforcing S004-T1 on 16M triangles (RCM, cell loop), plain and with rain, Green-Ampt and a Manning map
#             (bench case s004-t1-mesh-forcing), alternately, float and double
#   profile   Nsight Compute (ncu) on one step kernel launch per kernel and precision at 4096^2
#   profile3  Nsight Compute on the roe3 march kernels (S003-T3 1200^2)
#   lines     where the default kernel's instructions go: executed instructions
#             per cell-update by opcode and by source line (ncu source page,
#             tools/ncu_lines.py), float and double, S004-T1 4096^2
#   lines3    the same for one stage of the roe3 march kernel, S003-T3 2048^2
#   scaling   (2 GPUs, one rank each) S000-T1, S003-T3 (roe3), rain with soil and a Manning map, and volume
#             sources with a scalar: outputs on 2-4 ranks over the GPUs against one rank; weak scaling
#             (8192^2 per GPU, S004-T1 and S004-T2) and strong scaling (S004-T1 16384^2) against one GPU, float
#             and double, k = 1, 2, 4, 8 (SCALING_K, SCALING_SECONDS); weak S004-T1 again without the GPU links
#             (SHALLOWS_GPU_LINKS=off: halos through the host, the rate all-reduced by MPI); SCALING_PARTS picks
#             among "outputs weak strong nolinks" (default all four)
#   mpi       ranks sharing the first GPU (mpirun): S000-T1, S000-T2, a case with every boundary type and
#             Manning friction (first and third order), S003-T3 (roe3), cases with rain, Green-Ampt, a
#             Manning map, a passive scalar and a level segment (first and third order) and with volume
#             sources (an inflow segment, a point source, a sink; first and third order) on 2, 3, 4 ranks at
#             k = 1, 4, every output file (and the forcing's volumes) the same bytes as one rank, two of them
#             without the GPU links and three with the halos beside the inner chunks (SHALLOWS_HALO_OVERLAP=on,
#             which ranks sharing a GPU leave off by default); then S004-T1 at 8192^2 and S003-T3 (roe3) at
#             4096^2, 1 rank against 2 ranks: a step's split into compute, reduce, pack, exchange and wait
#             (shallows bench under mpirun); S004-T1 also with SHALLOWS_HALO_OVERLAP=on
#   mps       the same ranks sharing the first GPU through CUDA MPS: S004-T1 8192^2 and S003-T3 4096^2 on 2 ranks
#             with and without MPS against 1 rank; outputs under MPS against 1 rank (S000-T1, the boundaries case)
#   peers     the open GPU peers of ../shared/peers-bench (copied to $PEERS, default .peers: TUM SWE f-wave and
#             augmented Riemann, TRITON) on their circular dam break at 8192^2, and shallows in the same call: bench
#             S004-T1 8192^2 and `shallows run` on the peers' case (bench/cases/peers-dambreak.toml), float and double
#   structures the cost of ten structures (bench/cases/valley-ten-structures.toml against valley-no-structures):
#             the stepping time per step over the first 900 s at STRUCTURES_SIZES (default 400x300 1000x750
#             2000x1500), double and float, on the run's default kernel and on the lagged one
#             (SHALLOWS_CUDA_KERNEL), alternately, STRUCTURES_ROUNDS rounds (default 2); the same with
#             $BUILD-before where the stage `before` built it
#   before    build the tree in $BEFORE_SRC (the code before a change that must not change results or
#             speed, e.g. unpacked by `git archive OLD | tar -x -C .device/old`) into $BUILD-before
#   compare   against that build: every case of tools/compare-outputs.sh on the GPU, every output file the
#             same bytes; then tools/speed-compare.sh, old and new alternately on the five workloads
#             (COMPARE_ROUNDS rounds, default 2), new/old last
#   table     the summary (always printed last)
# Environment: OUT (log folder; default $BUILD/gpu-check), BUILD (default
# build-gpu), CUDA_ARCH, CUDA_FLAGS (default -lineinfo), JOBS, CPU_THREADS (default 4), BENCH_SECONDS
# (default 1.5), CMAKE_ARGS (more arguments for the build's cmake, e.g. -Dpybind11_DIR=...),
# KERNEL (bench kernel, default lagged), COMMIT (text for the
# results rows; default from git), RUNPATH_FORMATS (runpath's outputs, default "gauge vtk").
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
BUILD=${BUILD:-$REPO/build-gpu}
OUT=${OUT:-$BUILD/gpu-check}
CUDA_ARCH=${CUDA_ARCH:-90}
JOBS=${JOBS:-$(nproc)}
CPU_THREADS=${CPU_THREADS:-4}
BENCH_SECONDS=${BENCH_SECONDS:-1.5}
KERNEL=${KERNEL:-lagged}
mkdir -p "$OUT"
if [[ -z "${COMMIT:-}" ]]; then
  if head=$(git rev-parse --short HEAD 2>/dev/null); then
    if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then COMMIT="uncommitted on top of $head"; else COMMIT=$head; fi
  else
    COMMIT=unknown
  fi
fi

STAGES=("$@")
[[ ${#STAGES[@]} -eq 0 ]] && STAGES=(build test sanitize cli variants bench s000 roe3 mesh profile)
SUMMARY="$OUT/summary.md"
ROWS="$OUT/results-rows.md"
: >"$SUMMARY"
: >"$OUT/mpi.log"
STATUS=0
note() { echo "$*" | tee -a "$SUMMARY"; }
fail() { note "FAILED: $*"; STATUS=1; }

export LD_LIBRARY_PATH="$REPO/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
SHALLOWS="$BUILD/shallows"
TEST_BACKEND="$BUILD/tests/test_backend"

stage_build() {
  # A compiler whose libstdc++ is the static archive alone (the GPU machine's default g++) links a copy into the
  # Python module, which refuses to import then (python/src/module.cpp says why): C++ and CUDA's host code are
  # built by the first compiler that has the shared library.
  local cxx
  shared_libstdcxx() { [[ "$("$1" -print-file-name=libstdc++.so 2>/dev/null)" == /* ]]; }
  for cxx in "${CXX:-c++}" /usr/bin/g++; do
    if shared_libstdcxx "$cxx"; then
      export CXX=$cxx
      if [[ -z "${CUDAHOSTCXX:-}" ]] || ! shared_libstdcxx "$CUDAHOSTCXX"; then export CUDAHOSTCXX=$cxx; fi
      break
    fi
  done
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
    nvcc --version | tail -2
    cmake --version | head -1
    echo "C++ compiler: ${CXX:-default}, CUDA host compiler: ${CUDAHOSTCXX:-the default of nvcc}"
    cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$REPO/.deps/root/usr" -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" -DSHALLOWS_CUDA=ON \
      -DCMAKE_CUDA_FLAGS="${CUDA_FLAGS:--lineinfo}" ${CMAKE_ARGS:-} &&
      ninja -C "$BUILD" -j "$JOBS"
  } >"$OUT/build.log" 2>&1
  local rc=$?
  tail -3 "$OUT/build.log"
  if [[ $rc -ne 0 ]]; then
    grep -E "error|FAILED" "$OUT/build.log" | head -20
    fail "build (see build.log)"
    return 1
  fi
  note "build: ok (CUDA arch $CUDA_ARCH, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
}

gpu_tests_run() {
  # The GPU tests skip where no device is visible; here they must run.
  if "$TEST_BACKEND" --gtest_filter=CudaBackend.UnknownKernelIsRejected 2>&1 | grep -q "SKIPPED"; then
    fail "the GPU tests skip on this machine (no CUDA device visible?)"
    return 1
  fi
}

BEFORE_SRC=${BEFORE_SRC:-$REPO/.device/old}

stage_before() {
  cmake -S "$BEFORE_SRC" -B "$BUILD-before" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHALLOWS_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$REPO/.deps/root/usr" -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" -DSHALLOWS_CUDA=ON \
    -DCMAKE_CUDA_FLAGS="${CUDA_FLAGS:--lineinfo}" >"$OUT/before.log" 2>&1 &&
    ninja -C "$BUILD-before" -j "$JOBS" shallows_cli >>"$OUT/before.log" 2>&1 ||
    { tail -20 "$OUT/before.log"; fail "build of $BEFORE_SRC (see before.log)"; return 1; }
  note "before: built $BEFORE_SRC"
}

stage_compare() {
  local line
  # VTK and gauges: this machine's build has no NetCDF; the VTK files hold every field and the maxima.
  "$REPO/tools/compare-outputs.sh" "$BUILD-before/shallows" "$SHALLOWS" "$BUILD/compare" --backend cuda \
    --set 'output.format=["vtk"]' >"$OUT/compare.log" 2>&1
  line=$(tail -1 "$OUT/compare.log")
  if grep -q "^DIFFERENT\|failed on" "$OUT/compare.log"; then
    grep "^DIFFERENT\|failed on" "$OUT/compare.log" | head -20
    fail "outputs on the GPU, before against now: $line"
  else
    note "outputs on the GPU, before against now: $line"
  fi
  "$REPO/tools/speed-compare.sh" "$BUILD-before/shallows" "$SHALLOWS" "${COMPARE_ROUNDS:-2}" >"$OUT/speed.log" 2>&1
  grep -E "^FAILED" "$OUT/speed.log" && fail "speed-compare (see speed.log)"
  note "speed, before against now (best of ${COMPARE_ROUNDS:-2} rounds each, alternately):"
  sed -n '/^| case/,$p' "$OUT/speed.log" | tee -a "$SUMMARY" >/dev/null
}

# Microseconds a step of `shallows run` (summary.json's stepping_seconds over its steps); args: binary, case, nx,
# ny, precision, kernel (auto: the run's default).
structure_step_us() {
  local bin=$1 case=$2 nx=$3 ny=$4 prec=$5 kernel=$6 dir="$BUILD/structures-run"
  rm -rf "$dir"
  local env=()
  [[ $kernel != auto ]] && env=(SHALLOWS_CUDA_KERNEL="$kernel")
  env "${env[@]}" "$bin" run "$REPO/bench/cases/$case.toml" --backend cuda -q -o "$dir" -p "$prec" \
    --set domain.nx="$nx" --set domain.ny="$ny" --set time.end=900 --set 'output.format=["vtk"]' \
    >>"$OUT/structures.log" 2>&1 || { echo failed; return; }
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print("%.1f" % (1e6 * s["stepping_seconds"] / s["steps"]))' \
    "$dir/summary.json"
}

stage_structures() {
  : >"$OUT/structures.log"
  local builds=("$SHALLOWS") names=(now) size prec kernel round b nx ny
  [[ -x "$BUILD-before/shallows" ]] && builds=("$BUILD-before/shallows" "$SHALLOWS") && names=(before now)
  note "ten structures against none (valley, 900 s), µs a step, best of ${STRUCTURES_ROUNDS:-2} rounds:"
  note "| grid | precision | kernel | build | no structures | ten structures | ten/none |"
  note "|---|---|---|---|---|---|---|"
  for size in ${STRUCTURES_SIZES:-400x300 1000x750 2000x1500}; do
    nx=${size%x*} ny=${size#*x}
    for prec in double float; do
      for kernel in auto lagged; do
        for b in "${!builds[@]}"; do
          local none=999999 ten=999999 v
          for ((round = 0; round < ${STRUCTURES_ROUNDS:-2}; round++)); do
            v=$(structure_step_us "${builds[$b]}" valley-no-structures "$nx" "$ny" "$prec" "$kernel")
            [[ $v != failed ]] && none=$(python3 -c "print(min($none, $v))")
            v=$(structure_step_us "${builds[$b]}" valley-ten-structures "$nx" "$ny" "$prec" "$kernel")
            [[ $v != failed ]] && ten=$(python3 -c "print(min($ten, $v))")
          done
          note "| $nx x $ny | $prec | $kernel | ${names[$b]} | $none | $ten | $(python3 -c "print('%.3f' % ($ten / $none))") |"
        done
      done
    done
  done
}

stage_gputest() {
  gpu_tests_run || return 1
  local t0=$SECONDS
  ctest --test-dir "$BUILD" -L backend --output-on-failure >>"$OUT/tests.log" 2>&1
  local rc=$?
  local line
  line=$(grep -E "tests passed|tests failed" "$OUT/tests.log" | tail -1)
  if [[ $rc -ne 0 ]]; then
    grep -E "^\s*[0-9]+ - .*(Failed|Exception|Timeout)|Failure|Expected|Which is|actual" "$OUT/tests.log" | head -30
    fail "GPU tests: $line"
  else
    note "GPU tests (label backend): $line ($((SECONDS - t0)) s)"
  fi
}

stage_test() {
  : >"$OUT/tests.log"
  local t0=$SECONDS
  OMP_NUM_THREADS=$CPU_THREADS ctest --test-dir "$BUILD" -LE backend -j "$(((JOBS + CPU_THREADS - 1) / CPU_THREADS))" \
    --output-on-failure >>"$OUT/tests.log" 2>&1
  local rc=$?
  local line
  line=$(grep -E "tests passed|tests failed" "$OUT/tests.log" | tail -1)
  if [[ $rc -ne 0 ]]; then
    grep -E "^\s*[0-9]+ - .*(Failed|Exception|Timeout)" "$OUT/tests.log" | head -20
    fail "CPU tests: $line"
  else
    note "CPU tests: $line ($((SECONDS - t0)) s)"
  fi
  stage_gputest
}

stage_sanitize() {
  : >"$OUT/sanitizer.log"
  local tool
  for tool in memcheck racecheck initcheck synccheck; do
    local t0=$SECONDS
    local rc=0
    compute-sanitizer --tool "$tool" --error-exitcode 99 "$TEST_BACKEND" --gtest_filter='CudaSanitizer.*' \
      >>"$OUT/sanitizer.log" 2>&1 || rc=$?
    local summary
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.log" | tail -1)
    if [[ $rc -ne 0 ]]; then
      grep -E "=========" "$OUT/sanitizer.log" | head -20
      fail "compute-sanitizer $tool (rc $rc): $summary"
    else
      note "compute-sanitizer $tool: ${summary:-ok} ($((SECONDS - t0)) s)"
    fi
  done
}

# `shallows run` on the GPU and the CPU with the same case; the summaries must
# report the same number of steps. $1: label, then the case arguments.
cli_pair() {
  local label=$1 dir="$BUILD/gpu-check-cli/$1"
  shift
  rm -rf "$dir"
  # VTK output: GPU machines usually lack NetCDF, the cases' default.
  {
    "$BUILD/shallows" run "$@" --backend cuda -o "$dir/cuda" --set 'output.format=["vtk"]' &&
      "$BUILD/shallows" run "$@" --backend cpu -o "$dir/cpu" --set 'output.format=["vtk"]'
  } >>"$OUT/bench.log" 2>&1
  if [[ $? -ne 0 ]]; then
    tail -5 "$OUT/bench.log"
    fail "shallows run --backend cuda: $label"
    return 1
  fi
  local steps_gpu steps_cpu
  steps_gpu=$(grep -o '"steps": [0-9]*' "$dir/cuda/summary.json" 2>/dev/null)
  steps_cpu=$(grep -o '"steps": [0-9]*' "$dir/cpu/summary.json" 2>/dev/null)
  if [[ -n "$steps_gpu" && "$steps_gpu" == "$steps_cpu" ]]; then
    note "CLI: shallows run --backend cuda ($label) ok, $steps_gpu as on the CPU"
  else
    fail "CLI ($label): GPU $steps_gpu vs CPU $steps_cpu"
  fi
}

# stage forcing: the valley example (rain, Green-Ampt, a Manning map, an inflow
# segment, an open side, a tracer) on GPU and CPU with its water account, in
# its own first order and in third order; then S004-T1
# at 8192^2 on `shallows run` without and with rain, Green-Ampt and a Manning
# map, float and double: cell-updates/s over the stepping (results rows).
forcing_volumes() {
  grep -E '"(steps|rain_volume|infiltration_volume|source_volume|boundary_outflow_volume|mass_balance_residual|final_mass)"' "$1" |
    tr -d ' ,\n'
}

stage_forcing() {
  local dir="$BUILD/gpu-check-cli/valley"
  if [[ ${FORCING_VALLEY:-1} != 0 ]] && cli_pair valley "$REPO/cases/valley/case.toml" --set 'bathymetry.z={file="dem.asc"}'; then
    note "valley GPU: $(forcing_volumes "$dir/cuda/summary.json")"
    note "valley CPU: $(forcing_volumes "$dir/cpu/summary.json")"
  fi
  dir="$BUILD/gpu-check-cli/valley-roe3"
  if [[ ${FORCING_VALLEY:-1} != 0 ]] && cli_pair valley-roe3 "$REPO/cases/valley/case.toml" --set 'bathymetry.z={file="dem.asc"}' \
    --set 'numerics.scheme="roe3"'; then
    note "valley roe3 GPU: $(forcing_volumes "$dir/cuda/summary.json")"
    note "valley roe3 CPU: $(forcing_volumes "$dir/cpu/summary.json")"
  fi
  local n=8192 p label rate
  local forced=(--set 'rain.rate=30' --set 'physics.manning="x < 5 ? 0.03 : 0.06"'
    --set 'infiltration={model="green_ampt",conductivity=20,suction=0.1,deficit=0.3}')
  local scalars=(--set 'scalar=[{name="salt",initial=35.0},{name="dye",initial="x < 5 ? 1 : 0"}]')
  # Two points (a source and a sink) and an inflow segment along the west wall.
  local sources=(--set 'source=[{x=5.0,y=5.0,discharge=2.0},{x=2.0,y=8.0,discharge=-0.5}]'
    --set 'boundary.segment=[{side="west",from=2.0,to=4.0,type="inflow",discharge=1.0}]')
  # A tide on the west side: a level that follows a series.
  mkdir -p "$BUILD/gpu-check-forcing"
  printf 'time,eta\n0,0.5\n0.1,0.7\n0.2,0.6\n10,0.6\n' >"$BUILD/gpu-check-forcing/tide.csv"
  local series=(--set "boundary.west={type=\"level\",eta=\"$BUILD/gpu-check-forcing/tide.csv\"}")
  local what kernel
  for p in float double; do
    for label in ${FORCING_LABELS:-plain forcing sources sources-plain series series-plain scalars scalars-plain}; do
      local out="$BUILD/gpu-check-forcing/$label-$p" extra=()
      kernel=lagged
      [[ $label == forcing ]] && extra=("${forced[@]}")
      [[ $label == sources* ]] && extra=("${forced[@]}" "${sources[@]}")
      [[ $label == series* ]] && extra=("${forced[@]}" "${series[@]}")
      [[ $label == *-plain ]] && kernel=plain
      [[ $label == scalars* ]] && extra=("${forced[@]}" "${scalars[@]}")
      rm -rf "$out"
      SHALLOWS_CUDA_KERNEL=$kernel "$SHALLOWS" run "$REPO/cases/s004-t1/case.toml" --backend cuda --precision "$p" -q -o "$out" \
        --set domain.nx=$n --set domain.ny=$n --set time.end=0.2 --set time.output_every=0.1 \
        --set 'output.format=[]' "${extra[@]}" >>"$OUT/bench.log" 2>&1 || { fail "forcing run $label $p"; continue; }
      rate=$(grep -o '"cell_updates_per_second": [0-9.e+]*' "$out/summary.json" | awk '{print $2}')
      note "S004-T1 ${n}^2 $p run path, $label: $rate cell-updates/s"
      case $label in
        forcing) what=', rain 30 mm/h, Green-Ampt, Manning map' ;;
        scalars) what=', rain 30 mm/h, Green-Ampt, Manning map, two passive scalars' ;;
        sources) what=', rain 30 mm/h, Green-Ampt, Manning map, a source, a sink, an inflow segment' ;;
        sources-plain | series-plain | scalars-plain) what=', the same on the plain kernels (SHALLOWS_CUDA_KERNEL=plain)' ;;
        series) what=', rain 30 mm/h, Green-Ampt, Manning map, a tide on the west side (a level series)' ;;
        *) what='' ;;
      esac
      echo "| $(date -u +%F) | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) | $COMMIT | s004-t1 | ${n}x${n} | $p | run path, $label | $rate | - | shallows run, output every 0.1 s, no format$what |" >>"$ROWS"
    done
  done
}

# stage runpath: the run path against the benchmark. An output every 0.035 s
# of simulated time is about 200 steps at 8192^2. Gauges keep the maxima
# tracked without writing fields; VTK writes them all.
stage_runpath() {
  local n=8192 p label out rate bench_rate rows="$OUT/runpath-bench.md"
  local gauge='output.gauges=[{name="g",x=5,y=5}]'
  for p in float double; do
    : >"$rows"
    "$SHALLOWS" bench -b cuda -c s004-t1 -n $n -p $p -s "$BENCH_SECONDS" --commit "$COMMIT" --append "$rows" \
      >>"$OUT/bench.log" 2>&1 || { fail "runpath: bench $p"; continue; }
    bench_rate=$(awk -F'|' 'NF > 9 {gsub(/ /, "", $9); print $9; exit}' "$rows")
    for label in ${RUNPATH_FORMATS:-gauge vtk}; do
      out="$BUILD/gpu-check-runpath/$label-$p"
      rm -rf "$out"
      local fmt=("--set" "$gauge" "--set" 'output.format=[]')
      [[ $label == vtk ]] && fmt=("--set" 'output.format=["vtk"]')
      "$SHALLOWS" run "$REPO/cases/s004-t1/case.toml" --backend cuda --precision "$p" -q -o "$out" \
        --set domain.nx=$n --set domain.ny=$n --set time.end=0.35 --set time.output_every=0.035 "${fmt[@]}" \
        >>"$OUT/bench.log" 2>&1 || { fail "runpath: run $label $p"; continue; }
      rate=$(grep -o '"cell_updates_per_second": [0-9.e+]*' "$out/summary.json" | awk '{print $2}')
      local times
      times=$(grep -E '"(steps|setup_seconds|stepping_seconds|output_wait_seconds|finish_seconds)"' "$out/summary.json" |
        tr -d ' ,\n')
      note "S004-T1 ${n}^2 $p run path ($label): $rate cell-updates/s, bench $bench_rate, ratio $(awk -v a="$rate" -v b="$bench_rate" 'BEGIN { printf "%.3f", a / b }'); $times"
      echo "| $(date -u +%F) | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) | $COMMIT | s004-t1 | ${n}x${n} | $p | run path ($label) | $rate | - | shallows run, an output every 0.035 s (~200 steps), $([[ $label == vtk ]] && echo "maxima tracked" || echo "no maxima (gauges write none)"); bench $bench_rate in the same call |" >>"$ROWS"
    done
  done
}

stage_cli() {
  cli_pair built-in
  cli_pair s003-t3-roe3 "$REPO/cases/s003-t3/case.toml" --set domain.nx=100 --set domain.ny=100
  cli_pair river-bend-mesh "$REPO/cases/river-bend/case.toml" --set time.end=20
}

bench() {
  echo "+ shallows bench $*" >>"$OUT/bench.log"
  # SM clock, power and temperature once a second while it runs: compute-
  # bound kernels follow the clock.
  nvidia-smi dmon -s pc -d 1 >>"$OUT/bench.log" 2>&1 &
  local dmon=$!
  "$SHALLOWS" bench -b cuda --commit "$COMMIT" --append "$ROWS" "$@" 2>&1 | tee -a "$OUT/bench.log"
  local rc=${PIPESTATUS[0]}
  kill "$dmon" 2>/dev/null
  wait "$dmon" 2>/dev/null
  [[ $rc -eq 0 ]] || fail "shallows bench $*"
}

mpi_run() {
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SOURCE_DATE_EPOCH=0 "$@" >>"$OUT/mpi.log" 2>&1
}

stage_mpi() {
  if ! grep -q "^SHALLOWS_MPIEXEC:FILEPATH=/" "$BUILD/CMakeCache.txt" 2>/dev/null; then
    fail "mpi: the build found no MPI (mpi.h and mpirun; on Ubuntu: libopenmpi-dev openmpi-bin), nothing run"
    return 1
  fi
  local mpirun dir="$BUILD/gpu-check-mpi"
  mpirun=$(sed -n 's/^SHALLOWS_MPIEXEC:FILEPATH=//p' "$BUILD/CMakeCache.txt")
  rm -rf "$dir"
  # Every rank on the first GPU, as on a one-GPU machine.
  local -x CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  local -a runs=(
    "s000-t1 double|$REPO/cases/s000-t1/case.toml"
    "s000-t1 float|$REPO/cases/s000-t1/case.toml -p float"
    "s000-t2 float (wet/dry)|$REPO/cases/s000-t2/case.toml -p float"
    "inflow, level, open, wall, Manning, dry land|$REPO/tests/data/mpi/boundaries.toml"
    "s003-t3 roe3 float (80^2)|$REPO/cases/s003-t3/case.toml -p float --set domain.nx=80 --set domain.ny=80"
    "s003-t3 roe3 double (80^2)|$REPO/cases/s003-t3/case.toml --set domain.nx=80 --set domain.ny=80"
    "inflow, level, open, wall, Manning, dry land, roe3 float (96x40)|$REPO/tests/data/mpi/boundaries.toml -p float --set numerics.scheme=\"roe3\" --set domain.nx=96 --set time.end=5"
    "rain per cell, Green-Ampt, Manning map (lagged kernel's forcing)|$REPO/tests/data/mpi/rain_soil.toml --ranks-x 1"
    "rain per cell, Green-Ampt, Manning map, float|$REPO/tests/data/mpi/rain_soil.toml --ranks-x 1 -p float"
    "passive scalar, rain, Green-Ampt, level segment|$REPO/tests/data/mpi/rain_scalar.toml --ranks-x 1"
    "volume sources: an inflow segment over several ranks, a point source, a sink, a scalar|$REPO/tests/data/mpi/sources.toml --ranks-x 1"
    "volume sources, float|$REPO/tests/data/mpi/sources.toml --ranks-x 1 -p float"
    "volume sources, roe3|$REPO/tests/data/mpi/sources.toml --ranks-x 1 --set numerics.scheme=\"roe3\" --set domain.ny=100 --set time.end=5"
    "volume sources, roe3 float|$REPO/tests/data/mpi/sources.toml --ranks-x 1 -p float --set numerics.scheme=\"roe3\" --set domain.ny=100 --set time.end=5"
    "rain per cell, Green-Ampt, Manning map, roe3 (48x100)|$REPO/tests/data/mpi/rain_soil.toml --ranks-x 1 --set numerics.scheme=\"roe3\" --set domain.ny=100 --set time.end=5"
    "passive scalar, rain, Green-Ampt, level segment, roe3 float (48x100)|$REPO/tests/data/mpi/rain_scalar.toml --ranks-x 1 -p float --set numerics.scheme=\"roe3\" --set domain.ny=100 --set time.end=5"
    "a culvert and a pump whose ends lie on different ranks|$REPO/cases/basins-structures/case.toml --set time.end=120"
    "a culvert and a pump whose ends lie on different ranks, float|$REPO/cases/basins-structures/case.toml --set time.end=120 -p float"
    "a weir, its breach, a wall, a culvert and a pump across the ranks' blocks|$REPO/tests/data/mpi/structures.toml"
    "a weir, its breach, a wall, a culvert and a pump across the ranks' blocks, float|$REPO/tests/data/mpi/structures.toml -p float"
  )
  local r i=0
  for r in "${runs[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086  # the case and its options split on purpose
    compare_ranks "mpi: ${r%%|*}" "sharing the GPU" "$mpirun" "$dir/case-$i" ${r#*|}
  done
  # No links between the GPUs (as for ranks on other nodes): halos through the host, the rate all-reduced by MPI.
  SHALLOWS_GPU_LINKS=off compare_ranks "mpi: s000-t1 float, no GPU links" "sharing the GPU" "$mpirun" \
    "$dir/host-path" "$REPO/cases/s000-t1/case.toml" -p float
  SHALLOWS_GPU_LINKS=off compare_ranks "mpi: inflow, level, open, wall, Manning, roe3 float, no GPU links" \
    "sharing the GPU" "$mpirun" "$dir/host-path-roe3" "$REPO/tests/data/mpi/boundaries.toml" -p float \
    --set numerics.scheme=\"roe3\" --set domain.nx=96 --set time.end=5
  # The halos beside the inner chunks (off by default where ranks share a GPU): the same bytes.
  SHALLOWS_HALO_OVERLAP=on compare_ranks "mpi: s000-t2 float (wet/dry), halos beside the inner chunks" \
    "sharing the GPU" "$mpirun" "$dir/overlap" "$REPO/cases/s000-t2/case.toml" -p float
  SHALLOWS_HALO_OVERLAP=on compare_ranks "mpi: rain, Green-Ampt, Manning map, halos beside the inner chunks" \
    "sharing the GPU" "$mpirun" "$dir/overlap-forcing" "$REPO/tests/data/mpi/rain_soil.toml" --ranks-x 1
  SHALLOWS_GPU_LINKS=off SHALLOWS_HALO_OVERLAP=on compare_ranks \
    "mpi: s000-t1 float, no GPU links, halos beside the inner chunks" "sharing the GPU" "$mpirun" \
    "$dir/overlap-host-path" "$REPO/cases/s000-t1/case.toml" -p float
  # S004-T1 8192^2: one rank (the default kernel) against 2 ranks sharing the GPU, a step's split per k.
  bench -c s004-t1 -n 8192 -p float,double -s 2
  mpi_run "$mpirun" --oversubscribe -np 2 "$SHALLOWS" bench -b cuda -c s004-t1 -n 8192 -p float,double -s 2 \
    --halo-steps 1,4,8 || fail "mpi: bench on 2 ranks"
  # The same with the halos beside the inner chunks (off by default where ranks share a GPU).
  SHALLOWS_HALO_OVERLAP=on mpi_run "$mpirun" --oversubscribe -np 2 "$SHALLOWS" bench -b cuda -c s004-t1 -n 8192 \
    -p float,double -s 2 --halo-steps 1,4,8 || fail "mpi: bench on 2 ranks with the overlap"
  # Third order: S003-T3 4096^2, the same (a halo of 6 k cells).
  bench -c s003-t3 -n 4096 -p float,double -s 2
  mpi_run "$mpirun" --oversubscribe -np 2 "$SHALLOWS" bench -b cuda -c s003-t3 -n 4096 -p float,double -s 2 \
    --halo-steps 1,2 || fail "mpi: roe3 bench on 2 ranks"
  mpi_table
}

# Ranks sharing the first GPU through CUDA MPS (the daemon nvidia-cuda-mps-control, pipe and log folders under
# $OUT, stopped at the end), against the same ranks without it and one rank: S004-T1 8192^2 at k = 1, 4 and
# S003-T3 4096^2 at k = 1, 2; S000-T1 and the boundaries case on 2, 3, 4 ranks under MPS against one rank.
stage_peers() {
  # The open GPU peers (TUM SWE f-wave and augmented Riemann, TRITON) built from their sources by
  # ../shared/peers-bench (copied to $PEERS, default .peers), on its circular dam break at 8192^2, then shallows in the
  # same call: `shallows bench` on S004-T1 (the same kind of load) and `shallows run` on the peers' own case.
  local peers=${PEERS:-$REPO/.peers} n=8192 p out rate
  [[ -x $peers/bench_peers.sh || -f $peers/bench_peers.sh ]] || { fail "peers: no $peers/bench_peers.sh"; return 1; }
  OUT="$OUT/peers" PEER_SIZES=$n bash "$peers/bench_peers.sh" >"$OUT/peers.csv" 2>"$OUT/peers.log" ||
    fail "peers: bench_peers.sh (see peers.log)"
  while IFS=, read -r peer prec nx ny steps secs rate; do
    [[ $peer == peer || $peer == \#* || -z $peer ]] && continue
    note "peer $peer $prec ${nx}x$ny: $rate cell-updates/s ($steps steps in $secs s)"
    echo "| $(date -u +%F) | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) | $COMMIT | peers dam break | ${nx}x$ny | $prec | $peer | $rate | - | ../shared/peers-bench, $steps steps in $secs s, same call as the shallows rows below |" >>"$ROWS"
  done <"$OUT/peers.csv"
  grep "^# FAILED" "$OUT/peers.csv" | while read -r line; do note "$line"; done
  bench -c s004-t1 -n $n -p float,double -s "$BENCH_SECONDS" >/dev/null || fail "peers: shallows bench"
  for p in float double; do
    out="$BUILD/gpu-check-peers/$p"
    rm -rf "$out"
    "$SHALLOWS" run "$REPO/bench/cases/peers-dambreak.toml" --backend cuda --precision "$p" -q -o "$out" \
      >>"$OUT/bench.log" 2>&1 || { fail "peers: shallows run $p"; continue; }
    rate=$(grep -o '"cell_updates_per_second": [0-9.e+]*' "$out/summary.json" | awk '{print $2}')
    note "shallows $p on the peers' dam break ${n}^2 (shallows run): $rate cell-updates/s"
    echo "| $(date -u +%F) | $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) | $COMMIT | peers dam break | ${n}x$n | $p | shallows run | $rate | - | bench/cases/peers-dambreak.toml, to t = 1 s, no output; same call as the peers' rows |" >>"$ROWS"
  done
}

stage_mps() {
  local mpirun
  mpirun=$(sed -n 's/^SHALLOWS_MPIEXEC:FILEPATH=//p' "$BUILD/CMakeCache.txt")
  [[ -n $mpirun ]] || { fail "mps: the build found no MPI"; return 1; }
  command -v nvidia-cuda-mps-control >/dev/null || { fail "mps: no nvidia-cuda-mps-control on this machine"; return 1; }
  local -x CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  bench -c s004-t1 -n 8192 -p float,double -s 2
  bench -c s003-t3 -n 4096 -p float,double -s 2
  note "mps: 2 ranks sharing GPU $CUDA_VISIBLE_DEVICES without MPS"
  mpi_run "$mpirun" --oversubscribe -np 2 "$SHALLOWS" bench -b cuda -c s004-t1 -n 8192 -p float,double -s 2 \
    --halo-steps 1,4 || fail "mps: bench on 2 ranks without MPS"
  mpi_table
  local -x CUDA_MPS_PIPE_DIRECTORY="$OUT/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$OUT/mps-log"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if ! nvidia-cuda-mps-control -d; then
    fail "mps: the MPS daemon did not start"
    return 1
  fi
  note "mps: 2 ranks sharing GPU $CUDA_VISIBLE_DEVICES through MPS"
  mpi_run "$mpirun" -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY --oversubscribe -np 2 "$SHALLOWS" bench \
    -b cuda -c s004-t1 -n 8192 -p float,double -s 2 --halo-steps 1,4,8 || fail "mps: bench on 2 ranks with MPS"
  mpi_run "$mpirun" -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY --oversubscribe -np 2 "$SHALLOWS" bench \
    -b cuda -c s003-t3 -n 4096 -p float,double -s 2 --halo-steps 1,2 || fail "mps: roe3 bench on 2 ranks with MPS"
  mpi_table
  compare_ranks "mps: s000-t1 float" "sharing the GPU through MPS" "$mpirun" "$BUILD/gpu-check-mps/s000" \
    "$REPO/cases/s000-t1/case.toml" -p float
  compare_ranks "mps: inflow, level, open, wall, Manning, dry land" "sharing the GPU through MPS" "$mpirun" \
    "$BUILD/gpu-check-mps/boundaries" "$REPO/tests/data/mpi/boundaries.toml"
  echo quit | nvidia-cuda-mps-control
  # A client's exit shows as "failed to receive command ... assuming client exit": not an error.
  grep -h -i -E "error|fail" "$CUDA_MPS_LOG_DIRECTORY"/*.log 2>/dev/null | grep -v "assuming client" | head -5 |
    tee -a "$SUMMARY"
}

# tests/mpi/compare_ranks.sh on the CUDA backend, VTK output: every output file of 2, 3 and 4 ranks at k = 1
# and 4 the same bytes as one rank. Usage: compare_ranks LABEL WHERE MPIRUN DIR CASE [options...]
compare_ranks() {
  local label=$1 where=$2 mpirun=$3 dir=$4
  shift 4
  if mpi_run "$REPO/tests/mpi/compare_ranks.sh" "$SHALLOWS" "$mpirun" "$dir" "$@" -b cuda \
    --set 'output.format=["vtk"]'; then
    note "$label on 2, 3, 4 ranks $where, k = 1 and 4: every output file identical to 1 rank"
  else
    fail "$label: outputs differ between ranks $where (mpi.log)"
  fi
}

# The rows of the bench tables under mpirun that mpi.log gained since the last call, with a header, into the summary.
MPI_LOG_SEEN=0
mpi_table() {
  note "| case | backend | ranks | process grid | threads | k | precision | cells | steps | seconds | cell-updates/s | compute ms | reduce ms | pack ms | exchange ms | wait ms | halo B/step | halo path | rate all-reduce | halo overlap |"
  note "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n +$((MPI_LOG_SEEN + 1)) "$OUT/mpi.log" | grep -E '^\| s00(4-t[12]|3-t3) \| cuda(-roe3)?\+mpi' | tee -a "$SUMMARY" || true
  MPI_LOG_SEEN=$(wc -l <"$OUT/mpi.log")
}

# Scaling over the GPUs of one host (needs 2 GPUs; one rank per GPU), with `shallows bench`, float and double,
# halo widths SCALING_K (default 1,2,4,8), SCALING_SECONDS per configuration (default 1):
#   weak:   8192^2 per GPU, S004-T1 and S004-T2 tiled over the ranks (bench --weak), against one GPU at 8192^2;
#   strong: S004-T1 16384^2 in all, against one GPU at 16384^2.
# One GPU runs the default kernel with its dry-chunk skipping; ranks run the lagged kernel without skipping,
# so S004-T2 is also given on one GPU with skipping off.
stage_scaling() {
  local mpirun gpus
  mpirun=$(sed -n 's/^SHALLOWS_MPIEXEC:FILEPATH=//p' "$BUILD/CMakeCache.txt")
  [[ -n $mpirun ]] || { fail "scaling: the build found no MPI"; return 1; }
  gpus=$(nvidia-smi -L | wc -l)
  [[ $gpus -ge 2 ]] || { fail "scaling: $gpus GPU(s), 2 needed"; return 1; }
  local s=${SCALING_SECONDS:-1} k=${SCALING_K:-1,2,4,8} parts=" ${SCALING_PARTS:-outputs weak strong nolinks} "
  # Outputs on the GPUs of this host (ranks take GPU node rank mod 2) against one rank, every file the same bytes.
  local p
  if [[ $parts == *" outputs "* ]]; then
    for p in float double; do
      compare_ranks "scaling: S000-T1 $p" "over $gpus GPUs" "$mpirun" "$BUILD/gpu-check-scaling/s000-$p" \
        "$REPO/cases/s000-t1/case.toml" -p "$p"
    done
    compare_ranks "scaling: S003-T3 roe3 float (80^2)" "over $gpus GPUs" "$mpirun" "$BUILD/gpu-check-scaling/s003" \
      "$REPO/cases/s003-t3/case.toml" -p float --set domain.nx=80 --set domain.ny=80
    compare_ranks "scaling: rain, Green-Ampt, Manning map" "over $gpus GPUs" "$mpirun" \
      "$BUILD/gpu-check-scaling/rain-soil" "$REPO/tests/data/mpi/rain_soil.toml" --ranks-x 1
    compare_ranks "scaling: volume sources, a scalar" "over $gpus GPUs" "$mpirun" "$BUILD/gpu-check-scaling/sources" \
      "$REPO/tests/data/mpi/sources.toml" --ranks-x 1
  fi
  if [[ $parts == *" weak "* || $parts == *" nolinks "* ]]; then
    bench -c s004-t1 -n 8192 -p float,double -s "$s"
  fi
  if [[ $parts == *" weak "* ]]; then
    bench -c s004-t2 -n 8192 -p float,double -s "$s"
    bench -c s004-t2 -n 8192 -p float,double -s "$s" --dry-skip 0
    local c
    for c in s004-t1 s004-t2; do
      mpi_run "$mpirun" -np 2 "$SHALLOWS" bench -b cuda -c "$c" -n 8192 --weak -p float,double -s "$s" \
        --halo-steps "$k" || fail "scaling: weak $c"
    done
  fi
  if [[ $parts == *" strong "* ]]; then
    bench -c s004-t1 -n 16384 -p float,double -s "$s"
    mpi_run "$mpirun" -np 2 "$SHALLOWS" bench -b cuda -c s004-t1 -n 16384 -p float,double -s "$s" \
      --halo-steps "$k" || fail "scaling: strong"
  fi
  # The same weak S004-T1 without links between the GPUs (halos through the host, the rate by MPI), as between nodes.
  if [[ $parts == *" nolinks "* ]]; then
    SHALLOWS_GPU_LINKS=off mpi_run "$mpirun" -np 2 "$SHALLOWS" bench -b cuda -c s004-t1 -n 8192 --weak \
      -p float,double -s "$s" --halo-steps "$k" || fail "scaling: weak s004-t1, no GPU links"
  fi
  mpi_table
}

stage_variants() {
  bench -c s004-t1 -n 4096,8192 -p float,double -k lagged,plain -s "$BENCH_SECONDS"
}

stage_bench() {
  bench -c s004-t1 -n 1024,2048,4096,8192 -p float,double -k "$KERNEL" -s "$BENCH_SECONDS"
  bench -c s004-t2 -n 4096 -p float,double -k "$KERNEL" -s "$BENCH_SECONDS" --dry-skip 1 --compact 1
  bench -c s004-t2 -n 4096 -p float,double -k "$KERNEL" -s "$BENCH_SECONDS" --dry-skip 1 --compact 0
  bench -c s004-t2 -n 4096 -p float,double -k "$KERNEL" -s "$BENCH_SECONDS" --dry-skip 0
  # Time per step against the wet area (skipping on vs an all-wet grid).
  bench -c s004-t2 -n 4096 -p float,double --windows 4 --window-steps 60
}

# Third order (seed 003 Table 3): S003-T3 to t = 0.15 up to 1200^2, timed
# windows at 4096^2 and 8192^2, against first order on the same grids.
stage_roe3() {
  bench -c s003-t3 -n "${ROE3_SIZES:-50,100,200,400,800,1200,4096,8192}" -p float,double -s "$BENCH_SECONDS"
}

# Unstructured meshes (seed 001 Table 4): numberings and loop designs.
stage_mesh() {
  bench -c s004-t1-mesh --cells "${MESH_CELLS:-1,4,16}" --ordering random,rcm,morton --loop cell,edge \
    -p float,double -s "$BENCH_SECONDS"
  bench -c s004-t2-mesh --cells 4 --ordering rcm,morton --loop cell,edge -p float,double -s "$BENCH_SECONDS"
}

# Dry skipping on meshes: S004-T2 on 4M triangles (MESHSKIP_CELLS, millions), RCM and Z-order, the time per step
# against the wet area, on the GPU (cell loop) and on this machine's CPU cores (edge loop).
stage_meshskip() {
  local args=(-c s004-t2-mesh --windows "${MESHSKIP_WINDOWS:-4}" --cells "${MESHSKIP_CELLS:-4}" --ordering rcm,morton
    -p float,double)
  bench "${args[@]}" --window-steps "${MESHSKIP_STEPS:-100}"
  echo "+ shallows bench -b cpu ${args[*]}" >>"$OUT/bench.log"
  "$SHALLOWS" bench -b cpu --machine "$(nproc) CPU cores of the GPU machine" --commit "$COMMIT" --append "$ROWS" \
    "${args[@]}" --window-steps "${MESHSKIP_CPU_STEPS:-20}" 2>&1 | tee -a "$OUT/bench.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || fail "shallows bench -b cpu ${args[*]}"
}

# The forcing's cost on a mesh: S004-T1 on 16M triangles (RCM, cell loop) plain and with rain, Green-Ampt and
# a Manning map (s004-t1-mesh-forcing), alternately, two rounds.
stage_meshforcing() {
  local round
  for round in 1 2; do
    bench -c s004-t1-mesh --cells "${MESH_CELLS:-16}" --ordering rcm --loop cell -p float,double -s "$BENCH_SECONDS"
    bench -c s004-t1-mesh-forcing --cells "${MESH_CELLS:-16}" --ordering rcm --loop cell -p float,double \
      -s "$BENCH_SECONDS"
  done
}

stage_profile() {
  : >"$OUT/profile.log"
  local kernel prec
  for kernel in ${PROFILE_KERNELS:-lagged}; do
    for prec in float double; do
      echo "=== ncu: $kernel $prec" >>"$OUT/profile.log"
      ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section InstructionStats -k "regex:${kernel}_kernel" -s 12 -c 1 \
        "$SHALLOWS" bench -b cuda -c s004-t1 -n 4096 -p "$prec" -k "$kernel" -s 0.3 >>"$OUT/profile.log" 2>&1 ||
        fail "ncu $kernel $prec"
    done
  done
  grep -E "=== ncu|SM Frequency|Duration|Compute \(SM\) Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A" \
    "$OUT/profile.log" | tee -a "$SUMMARY"
}

# Nsight Compute on the third-order march kernel (S003-T3 1200^2): one launch
# of each stage kernel per precision.
stage_profile3() {
  : >"$OUT/profile3.log"
  local prec
  for prec in float double; do
    echo "=== ncu: roe3 march $prec" >>"$OUT/profile3.log"
    ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats \
      -k "regex:march_kernel" -s 30 -c 3 \
      "$SHALLOWS" bench -b cuda -c s003-t3 -n 1200 -p "$prec" >>"$OUT/profile3.log" 2>&1 || fail "ncu roe3 $prec"
  done
  grep -E "=== ncu|march_kernel|Duration|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|Stall|Executed Instructions  " \
    "$OUT/profile3.log" | tee -a "$SUMMARY"
}

stage_s000() {
  bench -c s000-t1 --level 4 --t-end 5 -p float,double -k "$KERNEL"
  bench -c s000-t1 --level 5 --t-end 0.1 -p float,double -k "$KERNEL"
}

# Executed instructions per cell-update by opcode and source line (the build
# carries -lineinfo, which changes no code): lines_profile LABEL KERNEL-REGEX
# SKIP CELLS BENCH-ARGS..., one launch.
lines_profile() {
  local label=$1 regex=$2 skip=$3 cells=$4
  shift 4
  local rep="$OUT/lines-$$"
  ncu --clock-control none --section SourceCounters --import-source yes -k "regex:$regex" -s "$skip" -c 1 \
    -f -o "$rep" "$SHALLOWS" bench -b cuda "$@" >>"$OUT/lines.log" 2>&1 || fail "ncu lines $label"
  ncu -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass >"$rep.csv" 2>>"$OUT/lines.log"
  echo "=== $label (one launch)" >>"$OUT/lines.log"
  python3 "$REPO/tools/ncu_lines.py" "$rep.csv" "$cells" 60 >>"$OUT/lines.log"
  rm -f "$rep.ncu-rep" "$rep.csv"
}

stage_lines() {
  : >"$OUT/lines.log"
  local prec
  for prec in float double; do
    lines_profile "$KERNEL $prec, S004-T1 4096^2" "${KERNEL}_kernel" 12 $((4096 * 4096)) \
      -c s004-t1 -n 4096 -p "$prec" -k "$KERNEL" -s 0.3
  done
  grep -E "^=== |^total|^warp" "$OUT/lines.log" | tee -a "$SUMMARY"
}

# The same for one stage of the third-order march kernel (S003-T3 2048^2).
stage_lines3() {
  : >"$OUT/lines.log"
  local prec
  for prec in float double; do
    lines_profile "roe3 march $prec, S003-T3 2048^2, one RK stage" march_kernel 30 $((2048 * 2048)) \
      -c s003-t3 -n 2048 -p "$prec" -s 0.3
  done
  grep -E "^=== |^total|^warp" "$OUT/lines.log" | tee -a "$SUMMARY"
}

for s in "${STAGES[@]}"; do
  echo "=== $s"
  case "$s" in
    build) stage_build || break ;;
    before) stage_before ;;
    compare) stage_compare ;;
    structures) stage_structures ;;
    test) stage_test ;;
    gputest) stage_gputest ;;
    sanitize) stage_sanitize ;;
    cli) stage_cli ;;
    forcing) stage_forcing ;;
    runpath) stage_runpath ;;
    variants) stage_variants ;;
    bench) stage_bench ;;
    s000) stage_s000 ;;
    roe3) stage_roe3 ;;
    mesh) stage_mesh ;;
    meshforcing) stage_meshforcing ;;
    meshskip) stage_meshskip ;;
    mpi) stage_mpi ;;
    scaling) stage_scaling ;;
    mps) stage_mps ;;
    peers) stage_peers ;;
    profile) stage_profile ;;
    profile3) stage_profile3 ;;
    lines) stage_lines ;;
    lines3) stage_lines3 ;;
    table) ;;
    *) fail "unknown stage $s" ;;
  esac
done

echo
echo "=== summary (logs in $OUT)"
cat "$SUMMARY"
if [[ -s "$ROWS" ]]; then
  echo
  echo "| date | device | commit | case | size | precision | kernel | cell-updates/s | fraction of bound | notes |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$ROWS"
fi
exit $STATUS
