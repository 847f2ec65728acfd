#!/usr/bin/env bash
# The accounts on several ranks: compare_ranks.sh (every output the one-rank
# bytes, the positivity and side accounts the one-rank values to round-off),
# then, on one rank and on every run of several, the accounts present in
# summary.json and output.nc, water through the sides both ways, the
# positivity fixes at work, and the mass balance checked and kept.
# Usage: accounts.sh SHALLOWS MPIRUN WORKDIR CASE [run options...]
set -euo pipefail
work=$3
"$(dirname "$0")/compare_ranks.sh" "$@"
status=0
value() { grep -E "^  \"$2\"" "$1/summary.json" | sed -E 's/.*: ([^,]*),?$/\1/'; }
for out in "$work"/one "$work"/np*; do
  for key in boundary_inflow_volume boundary_outflow_volume positivity_volume; do
    v=$(value "$out" "$key")
    awk -v v="$v" 'BEGIN { exit !(v != "null" && v + 0 > 0) }' || { echo "$out: $key is $v"; status=1; }
  done
  [ "$(value "$out" mass_balance_ok)" = true ] || { echo "$out: mass_balance_ok is not true"; status=1; }
  if ncdump -v boundary_inflow_volume "$out/output.nc" | sed -n '/^ boundary_inflow_volume =/,/;/p' |
    sed 's/^ boundary_inflow_volume =//' | grep -q _; then
    echo "$out: output.nc's boundary_inflow_volume holds fill values"
    status=1
  fi
done
((status == 0)) && echo "accounts present, mass balance kept on 1-4 ranks: $(value "$work/one" boundary_inflow_volume) in," \
  "$(value "$work/one" boundary_outflow_volume) out, positivity $(value "$work/one" positivity_volume) on one rank"
exit $status
