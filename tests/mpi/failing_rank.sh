#!/usr/bin/env bash
# A run on 2 ranks whose rank 0 fails alone (its output folder is a file):
# the job must end within seconds, exit non-zero and name rank 0.
# Usage: failing_rank.sh SHALLOWS MPIRUN WORKDIR CASE
set -uo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && touch "$work/not-a-folder"
start=$SECONDS
timeout 60 "$mpirun" --oversubscribe -np 2 "$shallows" run "$case" -t 1 -q -o "$work/not-a-folder/out" 2>"$work/stderr"
rc=$?
cat "$work/stderr"
[ $rc -ne 0 ] || { echo "the job exited 0"; exit 1; }
[ $rc -ne 124 ] || { echo "the job hung (killed after 60 s)"; exit 1; }
grep -q "error on rank 0 of 2" "$work/stderr" || { echo "no message naming rank 0"; exit 1; }
echo "ended with exit code $rc after $((SECONDS - start)) s"
