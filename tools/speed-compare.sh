#!/usr/bin/env bash
# Speed of two builds on the GPU, old and new alternately in one run, so that the clocks and the
# machine's state are shared: S004-T1 8192^2, S004-T2 4096^2, S004-T1 on 16M triangles (RCM),
# S003-T3 (roe3) 8192^2, and S004-T1 8192^2 with rain, Green-Ampt and a Manning map, float and double.
#
# Usage: tools/speed-compare.sh OLD_SHALLOWS NEW_SHALLOWS [ROUNDS]   (default 2 rounds)
# Prints each run's cell-updates/s and a table of new/old (the best of the rounds of each) last.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=${3:-2}
work=$(mktemp -d)
declare -A best

keep() {  # keep KEY RATE: the best rate of the rounds
  local key=$1 rate=$2
  if [[ -z "${best[$key]:-}" ]] || awk -v a="$rate" -v b="${best[$key]}" 'BEGIN { exit !(a > b) }'; then best[$key]=$rate; fi
}

# bench SIDE BIN LABEL ARGS...: `shallows bench` rows "| ... | precision | ... | rate |" -> rates per precision.
bench() {
  local side=$1 bin=$2 label=$3
  shift 3
  "$bin" bench -b cuda -p float,double "$@" >"$work/out.txt" 2>&1 || {
    echo "FAILED: $side $label: $(tail -2 "$work/out.txt")"
    return
  }
  local p rate
  for p in float double; do
    # The first row of that precision, in the column its table's header names cell-updates/s.
    rate=$(awk -F'|' -v p="$p" '
      /^\| case/ { delete col; for (i = 2; i < NF; ++i) { c = $i; gsub(/ /, "", c)
          if (c == "precision") col["p"] = i; if (c ~ /cell-updates\/s$/ && !("r" in col)) col["r"] = i } next }
      /^\|/ && ("p" in col) && ("r" in col) { q = $col["p"]; gsub(/ /, "", q)
        if (q == p) { r = $col["r"]; gsub(/ /, "", r); print r; exit } }' "$work/out.txt")
    echo "$side $label $p: $rate"
    [[ -n $rate ]] && keep "$label $p $side" "$rate"
  done
}

forcing() {
  local side=$1 bin=$2 p rate
  for p in float double; do
    rm -rf "$work/run"
    "$bin" run cases/s004-t1/case.toml --backend cuda --precision "$p" -q -o "$work/run" \
      --set domain.nx=8192 --set domain.ny=8192 --set time.end=0.2 --set time.output_every=0.1 --set 'output.format=[]' \
      --set 'rain.rate=30' --set 'physics.manning="x < 5 ? 0.03 : 0.06"' \
      --set 'infiltration={model="green_ampt",conductivity=20,suction=0.1,deficit=0.3}' >"$work/out.txt" 2>&1 || {
      echo "FAILED: $side forcing $p: $(tail -2 "$work/out.txt")"
      continue
    }
    rate=$(grep -o '"cell_updates_per_second": [0-9.e+]*' "$work/run/summary.json" | awk '{print $2}')
    echo "$side s004-t1-8192-forcing $p: $rate"
    keep "s004-t1-8192-forcing $p $side" "$rate"
  done
}

labels=(s004-t1-8192 s004-t2-4096 s004-t1-mesh-16M s003-t3-8192 s004-t1-8192-forcing)
for ((r = 1; r <= rounds; ++r)); do
  for side in old new; do
    bin=$old
    [[ $side == new ]] && bin=$new
    bench "$side" "$bin" s004-t1-8192 -c s004-t1 -n 8192 -s 1.5
    bench "$side" "$bin" s004-t2-4096 -c s004-t2 -n 4096 -s 1.5
    bench "$side" "$bin" s004-t1-mesh-16M -c s004-t1-mesh --cells 16 --ordering rcm --loop cell -s 1.5
    bench "$side" "$bin" s003-t3-8192 -c s003-t3 -n 8192 -s 1.5
    forcing "$side" "$bin"
  done
done

echo
echo "| case | precision | old (cell-updates/s) | new | new/old |"
echo "|---|---|---|---|---|"
for label in "${labels[@]}"; do
  for p in float double; do
    o=${best[$label $p old]:-} n=${best[$label $p new]:-}
    ratio=$( [[ -n $o && -n $n ]] && awk -v a="$n" -v b="$o" 'BEGIN { printf "%.3f", a / b }' || echo -)
    echo "| $label | $p | ${o:--} | ${n:--} | $ratio |"
  done
done
rm -rf "$work"
