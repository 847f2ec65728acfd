#!/usr/bin/env bash
# An ensemble run on one process, then under mpirun on 2 and 3 ranks (each
# rank running its share of the members as one-rank runs): the members'
# folders (their summary.json and NNNN.done aside: wall times), ensemble.nc
# and the exceedance maps are the same bytes, and ensemble.csv is the same
# but for its wall_seconds column; the failing member is reported on every
# run and the job exits 2; an ensemble stopped by SIGINT on 2 ranks and run
# again writes the ensemble.nc of one process.
# Usage: ensemble_ranks.sh SHALLOWS MPIRUN WORKDIR CASE
set -uo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
export SOURCE_DATE_EPOCH=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work" && mkdir -p "$work"
status=0
fail() { echo "$1"; status=1; }
"$shallows" run "$case" -t 1 -o "$work/one" >"$work/one.out" 2>"$work/one.err"
rc=$?
[ $rc -eq 2 ] || fail "one process: exit code $rc, not 2 (a member fails)"
# ensemble.csv without its wall_seconds column (the header names it).
csv() {
  local col
  col=$(head -1 "$1" | tr ',' '\n' | grep -nx wall_seconds | cut -d: -f1)
  cut -d, -f"$col" --complement "$1"
}
for np in 2 3; do
  dir=$work/np$np
  "$mpirun" --oversubscribe -np $np "$shallows" run "$case" -t 1 -o "$dir" >"$dir.out" 2>"$dir.err"
  rc=$?
  [ $rc -eq 2 ] || { cat "$dir.err"; fail "$np ranks: exit code $rc, not 2"; }
  grep -q "member 2 failed: " "$dir.err" || { cat "$dir.err"; fail "$np ranks: member 2's failure not reported"; }
  [ "$(grep -c '^ensemble mpi-ensemble: 6 members, 6 run now, 0 done before, 1 failed$' "$dir.out")" = 1 ] ||
    { cat "$dir.out"; fail "$np ranks: not one summary from rank 0"; }
  for f in ensemble.nc exceedance_0.05m.tif exceedance_0.2m.tif; do
    [ ! -e "$work/one/$f" ] || cmp -s "$work/one/$f" "$dir/$f" || fail "$np ranks: $f differs from one process"
  done
  [ -e "$dir/ensemble.nc" ] || fail "$np ranks: no ensemble.nc"
  cmp -s <(csv "$work/one/ensemble.csv") <(csv "$dir/ensemble.csv") ||
    { diff <(csv "$work/one/ensemble.csv") <(csv "$dir/ensemble.csv"); fail "$np ranks: ensemble.csv differs"; }
  # The members' files (summary.json and the NNNN.done results hold wall times).
  diff -rq -x summary.json -x '*.done' "$work/one/members" "$dir/members" >/dev/null ||
    { diff -rq -x summary.json -x '*.done' "$work/one/members" "$dir/members"; fail "$np ranks: the members' files differ"; }
  for m in 0000 0001 0003 0004 0005; do [ -e "$dir/members/$m.done" ] || fail "$np ranks: no members/$m.done"; done
done
# A rerun on 2 ranks runs nothing and rebuilds the same ensemble.nc.
"$mpirun" --oversubscribe -np 2 "$shallows" run "$case" -t 1 -q -o "$work/np2" 2>/dev/null
cmp -s "$work/one/ensemble.nc" "$work/np2/ensemble.nc" || fail "2 ranks, rerun: ensemble.nc differs"
# Stopped by SIGINT inside the first members on 2 ranks (exit 130, no ensemble files), then run again: the
# ensemble.nc of one process.
SHALLOWS_TEST_SIGNAL=2@1.0 "$mpirun" --oversubscribe -np 2 "$shallows" run "$case" -t 1 -q -o "$work/stopped" \
  >/dev/null 2>"$work/stopped.err"
rc=$?
[ $rc -eq 130 ] || { cat "$work/stopped.err"; fail "2 ranks, stopped: exit code $rc, not 130"; }
[ ! -e "$work/stopped/ensemble.nc" ] || fail "2 ranks, stopped: ensemble.nc written"
"$mpirun" --oversubscribe -np 2 "$shallows" run "$case" -t 1 -q -o "$work/stopped" >/dev/null 2>&1
cmp -s "$work/one/ensemble.nc" "$work/stopped/ensemble.nc" || fail "2 ranks, resumed: ensemble.nc differs"
[ $status -eq 0 ] && echo "ensemble on 1, 2 and 3 ranks: the same files"
exit $status
