#!/usr/bin/env bash
# Runs a case on one rank, then under mpirun on 2, 3 and 4 ranks with halos
# of k = 1 and k = 4 steps, and checks that every output file (output.nc,
# VTK, gauges) is the same bytes, and that summary.json has the same steps and
# volumes. Usage: compare_ranks.sh SHALLOWS MPIRUN WORKDIR CASE [run options...]
set -euo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
shift 4
export SOURCE_DATE_EPOCH=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work" && mkdir -p "$work"
fields() { grep -E '^  "(steps|initial_volume|final_volume)"' "$1/summary.json"; }
"$shallows" run "$case" -o "$work/one" -t 1 -q "$@"
status=0
for np in 2 3 4; do
  for k in 1 4; do
    out="$work/np$np-k$k"
    "$mpirun" --oversubscribe -np "$np" "$shallows" run "$case" -o "$out" -t 1 -q --halo-steps "$k" "$@"
    files=$(cd "$work/one" && find . -type f ! -name summary.json | sort)
    [ -n "$files" ] || { echo "no output files"; exit 1; }
    for f in $files; do
      cmp -s "$work/one/$f" "$out/$f" || { echo "DIFFERENT: $f at $np ranks, k = $k"; status=1; }
    done
    diff <(fields "$work/one") <(fields "$out") >/dev/null || { echo "DIFFERENT summary at $np ranks, k = $k"; status=1; }
    grep -q "\"ranks\": $np" "$out/summary.json" || { echo "summary.json does not say $np ranks"; status=1; }
  done
  echo "$np ranks, k = 1 and 4: $(echo "$files" | wc -w) files identical to one rank"
done
exit $status
