#!/usr/bin/env bash
# The process grid and halo from the case's [parallel] section, and the command
# line's --ranks-x, --ranks-y, --halo-steps over it, on 2 ranks: summary.json's
# process_grid and halo_steps say which were used; a grid that does not fit the
# job is refused with a message naming both sources.
# Usage: parallel_keys.sh SHALLOWS MPIRUN WORKDIR CASE
set -uo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work"
# The case with a [parallel] section appended (the case computes its fields from expressions: no files to carry).
{ cat "$case"; printf '\n[parallel]\nranks_x = 1\nranks_y = 2\nhalo_steps = 3\n'; } >"$work/case.toml"
run() {  # output folder, then run options
  local out=$1
  shift
  timeout 60 "$mpirun" --oversubscribe -np 2 "$shallows" run "$work/case.toml" -o "$work/$out" -t 1 -q \
    --set time.end=0.5 "$@" >"$work/$out.log" 2>&1
}
status=0
expect() {  # output folder, process grid, halo steps
  grep -q "\"process_grid\": \[$2\]" "$work/$1/summary.json" && grep -q "\"halo_steps\": $3," "$work/$1/summary.json" ||
    { echo "$1: expected process_grid [$2] and halo_steps $3:"; grep -E 'process_grid|halo_steps' "$work/$1/summary.json"; status=1; }
}
run from-case || { echo "from-case failed:"; cat "$work/from-case.log"; exit 1; }
expect from-case "1, 2" 3
run from-command-line --ranks-x 2 --ranks-y 1 --halo-steps 2 || { cat "$work/from-command-line.log"; exit 1; }
expect from-command-line "2, 1" 2
run from-set --set parallel.halo_steps=4 || { cat "$work/from-set.log"; exit 1; }
expect from-set "1, 2" 4
# --ranks-x 2 alone: ranks_y = 2 still comes from the case, and 2 x 2 is not the job's 2 ranks.
if run mixed --ranks-x 2; then
  echo "mixed: a 2 x 2 grid on 2 ranks was not refused"
  status=1
fi
grep -q "\-\-ranks-x / parallel.ranks_x 2 x --ranks-y / parallel.ranks_y 2 is not the job's 2 ranks" "$work/mixed.log" ||
  { echo "mixed: no message naming both sources:"; cat "$work/mixed.log"; status=1; }
[ $status -ne 0 ] || echo "case keys used, command line over them, mismatch named"
exit $status
