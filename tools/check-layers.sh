#!/usr/bin/env bash
# The layer rules of docs/architecture.md: which folder may include which. Each line of RULES is a
# folder (headers under include/shallows/ and sources under src/ alike) and the shallows folders its
# files may include; the run driver (solver/run.*, solver/run_ensemble.*, the backend factory) and app/ may include anything.
# Prints every include that breaks a rule and "N passed, N failed" (folders) last.
set -uo pipefail
cd "$(dirname "$0")/.."
numerics="core|physics|numerics|bc|mesh/structured"
RULES=(
  "core:core"
  "physics:$numerics"
  "numerics:$numerics"
  "bc:$numerics"
  "mesh:$numerics|mesh|io/gmsh|io/input_error"
  "solver:$numerics|mesh|solver"
  "io:$numerics|mesh|solver|io"
  "exec:$numerics|mesh|solver|exec"
)
DRIVER='^(src/solver/(run|run_ensemble|backend)\.cpp|include/shallows/solver/(run|run_ensemble)\.hpp)$'
passed=0 failed=0
for rule in "${RULES[@]}"; do
  folder=${rule%%:*} allowed=${rule#*:}
  bad=$(for dir in "include/shallows/$folder" "src/$folder"; do
    [ -d "$dir" ] && grep -rnoE '#include "shallows/[a-z_]+(/[a-z_]+)?' "$dir"
  done | while IFS=: read -r file line inc; do
    [[ $file =~ $DRIVER ]] && continue
    target=${inc#\#include \"shallows/}
    [[ $target =~ ^($allowed)(/|$) ]] || echo "$file:$line includes shallows/$target ($folder may include: ${allowed//|/, })"
  done)
  if [ -n "$bad" ]; then
    echo "$bad"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
