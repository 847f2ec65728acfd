#!/usr/bin/env bash
# Runs on 2 ranks where one rank fails alone: its output folder is a file
# (rank 0), its command line names a case file that does not exist (rank 1),
# or it reads other inputs than rank 0 (rank 1: another grid, another
# precision). Each job must end within seconds, exit non-zero and name the
# failing rank, never hang or crash.
# Usage: failing_rank.sh SHALLOWS MPIRUN WORKDIR CASE
set -uo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && touch "$work/not-a-folder"
status=0
# expect NAME PATTERN MPIRUN-ARGS...: the job fails, within 60 s, and stderr matches PATTERN.
expect() {
  local name=$1 pattern=$2
  shift 2
  local start=$SECONDS
  timeout 60 "$mpirun" --oversubscribe "$@" 2>"$work/$name.stderr" >/dev/null
  local rc=$?
  if [ $rc -eq 0 ]; then
    echo "$name: the job exited 0"; status=1
  elif [ $rc -eq 124 ]; then
    echo "$name: the job hung (killed after 60 s)"; status=1
  elif ! grep -q "$pattern" "$work/$name.stderr"; then
    cat "$work/$name.stderr"; echo "$name: no message matching '$pattern'"; status=1
  else
    echo "$name: ended with exit code $rc after $((SECONDS - start)) s: $(grep -m1 "$pattern" "$work/$name.stderr")"
  fi
}
run=(run "$case" -t 1 -q)
expect output-folder "error on rank 0 of 2" -np 2 "$shallows" "${run[@]}" -o "$work/not-a-folder/out"
expect missing-case "error on rank 1 of 2: case: File does not exist" \
  -np 1 "$shallows" "${run[@]}" -o "$work/a" : -np 1 "$shallows" run "$work/missing.toml" -t 1 -q -o "$work/a"
expect other-grid "error on rank 0 of 2: the ranks do not run the same case: rank(s) 1 read other inputs" \
  -np 1 "$shallows" "${run[@]}" -o "$work/b" : -np 1 "$shallows" "${run[@]}" -o "$work/b" --set domain.nx=44
expect other-precision "the ranks do not run the same case: rank(s) 1" \
  -np 1 "$shallows" "${run[@]}" -o "$work/c" : -np 1 "$shallows" "${run[@]}" -o "$work/c" -p float
exit $status
