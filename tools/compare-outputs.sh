#!/usr/bin/env bash
# Before/after check of a change that must not change results: runs every case in cases/ and the
# forcing cases of tests/data/mpi with two builds of shallows, in float and double, and checks that
# every output file is the same bytes and that summary.json agrees but for its timings.
#
# Usage: tools/compare-outputs.sh OLD_SHALLOWS NEW_SHALLOWS WORKDIR [run options...]
#   e.g. tools/compare-outputs.sh /tmp/old/build/shallows build/shallows /tmp/cmp --backend cuda
# With RANKS=N in the environment, both builds run under mpirun on N ranks.
# Prints one line per run and "N passed, N failed" last; exits non-zero on any difference.
set -uo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 work=$3
shift 3
export SOURCE_DATE_EPOCH=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch=()
if [ -n "${RANKS:-}" ]; then launch=(mpirun --oversubscribe -np "$RANKS"); fi
rm -rf "$work" && mkdir -p "$work"

# On the GPU the positivity account is summed by atomics in no fixed order (docs/gpu.md): it and the balance
# residual it enters are compared to 1e-9 relative (1e-15 absolute) there, everything else bit for bit.
round_off='^$'
for arg in "$@"; do [ "$arg" = cuda ] && round_off='"(positivity_volume|mass_balance_residual)"'; done

# summary.json without what depends on the machine's speed (nor the round-off keys).
summary() {
  grep -vE '"(setup|stepping|output_wait|finish|wall)_seconds"|"cell_updates_per_second"|"rank_timings"|^ *\{"rank": ' "$1" |
    grep -vE "$round_off" | sed -E 's/"(reduce|exchange|step)_seconds": [^,}]*//g'
}

# Whether the round-off keys of two summary.json files agree to 1e-9 relative.
close() {
  paste <(grep -E "$round_off" "$1") <(grep -E "$round_off" "$2") | tr -d ',' |
    awk '{ a = $2 + 0; b = $4 + 0; d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; n = b < 0 ? -b : b
           if (n > m) m = n; if (d > 1e-9 * m + 1e-15) bad = 1 } END { exit bad }'
}

# Each line: a name, then the case file and options.
runs=()
for c in cases/*/case.toml; do runs+=("$(basename "$(dirname "$c")") $c"); done
for c in tests/data/mpi/*.toml; do runs+=("mpi-$(basename "$c" .toml) $c"); done
runs+=("s000-t1-roe3 cases/s000-t1/case.toml --set numerics.scheme=\"roe3\"")
runs+=("valley-roe3 cases/valley/case.toml --set numerics.scheme=\"roe3\" --set time.end=900 --set domain.nx=60 --set domain.ny=150")

passed=0 failed=0
for line in "${runs[@]}"; do
  read -r -a words <<<"$line"
  name=${words[0]}
  args=("${words[@]:1}")
  for precision in double float; do
    dir="$work/$name-$precision"
    ok=1
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      if ! "${launch[@]}" "$bin" run "${args[@]}" -p "$precision" -o "$dir/$side" -q "$@" >"$dir-$side.log" 2>&1; then
        echo "$side build failed on $name ($precision): $(tail -1 "$dir-$side.log")"
        ok=0
      fi
    done
    if ((ok)); then
      files=$(cd "$dir/old" && find . -type f ! -name summary.json | sort)
      for f in $files; do
        cmp -s "$dir/old/$f" "$dir/new/$f" || { echo "DIFFERENT: $name ($precision) $f"; ok=0; }
      done
      [ "$files" = "$(cd "$dir/new" && find . -type f ! -name summary.json | sort)" ] ||
        { echo "DIFFERENT: $name ($precision): not the same files"; ok=0; }
      diff <(summary "$dir/old/summary.json") <(summary "$dir/new/summary.json") >/dev/null &&
        close "$dir/old/summary.json" "$dir/new/summary.json" ||
        { echo "DIFFERENT: $name ($precision) summary.json"; ok=0; }
    fi
    if ((ok)); then
      passed=$((passed + 1))
      echo "same: $name ($precision), $(echo "$files" | wc -w) files"
    else
      failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
((failed == 0))
