#!/usr/bin/env bash
# Runs a case on one rank, then under mpirun on 2, 3 and 4 ranks with halos
# of k = 1 and k = 4 steps, and checks that every output file (output.nc,
# VTK, gauges, structures.csv) is the same bytes (output.nc: the positivity
# and side accounts the same bytes or to round-off, see below), and that
# summary.json has the same steps, volumes (the forcing's and the structures'
# too), accounts (to round-off) and mass balance verdict.
# Usage: compare_ranks.sh SHALLOWS MPIRUN WORKDIR CASE [run options...]
set -euo pipefail
shallows=$1 mpirun=$2 work=$3 case=$4
shift 4
export SOURCE_DATE_EPOCH=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work" && mkdir -p "$work"
fields() {
  grep -E '^  "(steps|initial_volume|final_volume|rain_volume|infiltration_volume|source_volume|mass_balance_ok)"' \
    "$1/summary.json"
  sed -n '/^  "structures": \[/,/^  \]/p' "$1/summary.json"  # each structure's volume (a breach's width): the bits
}
# The positivity account and the water through the sides are sums over the
# ranks of each rank's account, in rank order: one rank adds each cell's
# part to a running total step by step, which ranks cannot do without a
# message per step. They are the one-rank bits where the terms fall in one
# block (a side that lies in one block, clamps in one block), else the
# one-rank value to round-off: compared with a relative tolerance, fill
# values and nulls exactly.
accounts='positivity_volume|boundary_inflow_volume|boundary_outflow_volume'
tolerance=1e-12
# On GPUs in float a warp first sums its cells' clamp gains in float, over
# chunks that a rank's block places elsewhere than one GPU does.
options=" $* "
if [[ $options =~ \ (-b|--backend)\ cuda\  && $options =~ \ (-p|--precision)\ float\  ]]; then tolerance=1e-5; fi
close() {
  paste -d' ' "$1" "$2" | awk -v tol="$tolerance" '
    NF != 2 { bad = 1; next }
    $1 == $2 { next }
    $1 ~ /^[-+0-9.eE]+$/ && $2 ~ /^[-+0-9.eE]+$/ {
      d = $1 - $2; d = d < 0 ? -d : d; s = $1 < 0 ? -$1 : $1; t = $2 < 0 ? -$2 : $2; s = s > t ? s : t
      if (d <= tol * s) next
    }
    { bad = 1 }
    END { exit bad }'
}
nc_values() { ncdump -p 17,17 -v "$2" "$1" | sed -n "/^ $2 = /,/;/p" | sed -E "s/^ $2 = //; s/[ ;]//g" | tr ',' '\n' | grep .; }
json_values() { grep -E "^  \"($accounts)\"" "$1" | sed -E 's/.*: ([^,]*),?$/\1/'; }
# output.nc: the same bytes but for the accounts (both files copied without
# them), and the accounts close to one rank's.
nc_vars() {
  ncdump -h "$1" | grep -oE '^\s+(byte|char|short|int|float|double) [A-Za-z_0-9]+' | awk '{print $2}' |
    grep -vxE "$accounts" | paste -sd, -
}
same() {
  # The same bytes are the same values: the copies and dumps below only for files that differ.
  if cmp -s "$2" "$3"; then return 0; fi
  if [[ $1 == *.nc ]]; then
    local vars v
    vars=$(nc_vars "$2")
    nccopy -V "$vars" "$2" "$work/a.nc" && nccopy -V "$vars" "$3" "$work/b.nc" && cmp -s "$work/a.nc" "$work/b.nc" ||
      return 1
    for v in ${accounts//|/ }; do
      close <(nc_values "$2" "$v") <(nc_values "$3" "$v") || { echo "$v: not the one-rank values"; return 1; }
    done
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
    close <(json_values "$work/one/summary.json") <(json_values "$out/summary.json") ||
      { echo "DIFFERENT accounts in summary.json at $np ranks, k = $k"; status=1; }
    grep -q "\"ranks\": $np" "$out/summary.json" || { echo "summary.json does not say $np ranks"; status=1; }
  done
  echo "$np ranks, k = 1 and 4: $(echo "$files" | wc -w) files identical to one rank"
done
exit $status
