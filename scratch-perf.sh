#!/usr/bin/env bash
set -u
export JOBS=16 COMMIT=${COMMIT:-unknown}
tools/gpu-check.sh build mpi table 2>&1 | tail -12
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu
ctest --test-dir build-gpu -R "CudaRestart" --output-on-failure 2>&1 | tail -4
S=build-gpu/shallows
$S bench -b cuda -c s004-t1 -n 8192 -p float double -s 2 2>&1 | tail -3
$S bench -b cuda -c s003-t3 -n 4096 -p float double -s 2 2>&1 | tail -6
for v in "float []" "double []" "float [\"vtk\"]"; do
  set -- $v
  echo "== run path $1 $2"
  $S run cases/s004-t1/case.toml --backend cuda --output /tmp/rp --set domain.nx=8192 --set domain.ny=8192 \
    --set time.end=0.4 --set time.output_every=0.04 --set "output.format=$2" --precision $1 2>&1 | grep -E "wall time|while stepping"
done
