#!/usr/bin/env bash
# `shallows bench` under mpirun: S004-T1 32x32 on 2 ranks (2 x 1) at k = 1
# and 4 prints a row per k with the step's split, appends them to a results
# file, and reports the halo the busiest rank sends per step: 32 rows x 1
# column x 3 values x 8 B = 768 B at k = 1 (an exchange every step), and
# that the halos travel beside the inner cells (SHALLOWS_HALO_OVERLAP=off:
# not; another value: an error naming the variable). With
# --weak, -n 16 is each rank's block: a 32x16 grid, 384 B per step at k = 1.
# Usage: bench_table.sh SHALLOWS MPIRUN WORKDIR
set -euo pipefail
shallows=$1 mpirun=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$mpirun" --oversubscribe -np 2 "$shallows" bench -c s004-t1 -n 32 -p double -s 0.05 --halo-steps 1,4 \
  --machine test-machine --append "$work/rows.md" | tee "$work/table.md"
status=0
for k in 1 4; do
  grep -qE "^\| s004-t1 \| serial\+mpi \| 2 \| 2x1 \| 1 \| $k \| double \| 32x32 \|" "$work/table.md" ||
    { echo "no row for k = $k"; status=1; }
done
row=$(grep -E "^\| s004-t1 \| serial\+mpi \| 2 \| 2x1 \| 1 \| 1 \|" "$work/table.md" || true)
halo=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $18); print $18}')
[ "$halo" = "768" ] || { echo "halo B/step at k = 1: '$halo', expected 768"; status=1; }
path=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $19); print $19}')
[ "$path" = "host" ] || { echo "halo path of CPU ranks: '$path', expected host"; status=1; }
rate=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $20); print $20}')
[ "$rate" = "mpi" ] || { echo "rate all-reduce of CPU ranks: '$rate', expected mpi"; status=1; }
overlap=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $21); print $21}')
[ "$overlap" = "yes" ] || { echo "halo overlap of CPU ranks: '$overlap', expected yes"; status=1; }
SHALLOWS_HALO_OVERLAP=off "$mpirun" --oversubscribe -np 2 "$shallows" bench -c s004-t1 -n 32 -p double -s 0.05 \
  --halo-steps 1 >"$work/no-overlap.md"
overlap=$(grep -E "^\| s004-t1 \| serial\+mpi \| 2 \|" "$work/no-overlap.md" |
  awk -F'|' '{gsub(/ /, "", $21); print $21}')
[ "$overlap" = "no" ] || { echo "SHALLOWS_HALO_OVERLAP=off: halo overlap '$overlap', expected no"; status=1; }
if SHALLOWS_HALO_OVERLAP=maybe "$mpirun" --oversubscribe -np 2 "$shallows" bench -c s004-t1 -n 32 -s 0.05 \
  >"$work/bad-overlap.txt" 2>&1; then
  echo "SHALLOWS_HALO_OVERLAP=maybe was accepted"; status=1
fi
grep -q "SHALLOWS_HALO_OVERLAP must be on or off, not 'maybe'" "$work/bad-overlap.txt" ||
  { echo "SHALLOWS_HALO_OVERLAP=maybe: no message naming it"; status=1; }
[ "$(grep -c "test-machine | s004-t1 | serial+mpi" "$work/rows.md")" = 2 ] || { echo "rows not appended once each"; status=1; }
"$mpirun" --oversubscribe -np 2 "$shallows" bench -c s004-t2 -n 16 -p double -s 0.05 --halo-steps 1 --weak |
  tee "$work/weak.md"
row=$(grep -E "^\| s004-t2 \| serial\+mpi \| 2 \| 2x1 \| 1 \| 1 \| double \| 32x16 \|" "$work/weak.md" || true)
halo=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $18); print $18}')
[ "$halo" = "384" ] || { echo "--weak: no 32x16 row with 384 halo B/step: '$row'"; status=1; }
if "$shallows" bench -c s004-t1 -n 16 --weak >"$work/alone.txt" 2>&1; then
  echo "--weak without mpirun was accepted"; status=1
fi
grep -q "start it under mpirun" "$work/alone.txt" || { echo "--weak alone: no message"; status=1; }
exit $status
