#!/usr/bin/env bash
# Runs a case on one rank, then under mpirun on 2, 3 and 4 ranks with halos
# of k = 1 and k = 4 steps, and checks that every output file (output.nc,
# VTK, gauges) is the same bytes (output.nc: but for the accounts several
# ranks keep none of), and that summary.json has the same steps and volumes
# (the forcing's too). Usage: compare_ranks.sh SHALLOWS MPIRUN WORKDIR CASE [run options...]
set -euo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
shift 4
export SOURCE_DATE_EPOCH=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work" && mkdir -p "$work"
fields() { grep -E '^  "(steps|initial_volume|final_volume|rain_volume|infiltration_volume|source_volume)"' "$1/summary.json"; }
# output.nc: the same bytes but for the records of the accounts that several
# ranks do not keep (positivity_volume and the water through the sides hold
# fill values there, as summary.json says null): both files copied without them.
nc_vars() {
  ncdump -h "$1" | grep -oE '^\s+(byte|char|short|int|float|double) [A-Za-z_0-9]+' | awk '{print $2}' |
    grep -vxE 'positivity_volume|boundary_inflow_volume|boundary_outflow_volume' | paste -sd, -
}
same() {
  if [[ $1 == *.nc ]]; then
    local vars
    vars=$(nc_vars "$2")
    nccopy -V "$vars" "$2" "$work/a.nc" && nccopy -V "$vars" "$3" "$work/b.nc" && cmp -s "$work/a.nc" "$work/b.nc"
  else
    cmp -s "$2" "$3"
  fi
}
"$shallows" run "$case" -o "$work/one" -t 1 -q "$@"
status=0
for np in 2 3 4; do
  for k in 1 4; do
    out="$work/np$np-k$k"
    "$mpirun" --oversubscribe -np "$np" "$shallows" run "$case" -o "$out" -t 1 -q --halo-steps "$k" "$@"
    files=$(cd "$work/one" && find . -type f ! -name summary.json | sort)
    [ -n "$files" ] || { echo "no output files"; exit 1; }
    for f in $files; do
      same "$f" "$work/one/$f" "$out/$f" || { echo "DIFFERENT: $f at $np ranks, k = $k"; status=1; }
    done
    diff <(fields "$work/one") <(fields "$out") >/dev/null || { echo "DIFFERENT summary at $np ranks, k = $k"; status=1; }
    grep -q "\"ranks\": $np" "$out/summary.json" || { echo "summary.json does not say $np ranks"; status=1; }
  done
  echo "$np ranks, k = 1 and 4: $(echo "$files" | wc -w) files identical to one rank"
done
exit $status
