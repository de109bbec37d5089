#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What one translation unit that asks attnsel once costs the compiler (issue 31): compiler CPU seconds
# (the median of REPS runs) and peak memory, for bench/compile_cost/one_select.cpp including
#   <attnsel/attnsel.hpp> header-only (the default mode), <attnsel/all.hpp> header-only (the JSON layer
#   too), and <attnsel/attnsel.hpp> against the compiled library (ATTNSEL_COMPILED_LIB: declarations only).
# Usage: bench/compile_cost.sh [BUILD_DIR] (default build/dev: its generated/include holds the catalog
#        tables)   Environment: CXX (default g++), CXXFLAGS (default -O2), REPS (default 3).
# Timings on a loaded machine move; peak memory does not.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build/dev}"
generated="$build/generated/include"
[[ -f "$generated/attnsel/generated/catalog_tables.hpp" ]] ||
  { echo "compile_cost.sh: error: no $generated/attnsel/generated/catalog_tables.hpp (configure and build $build first)" >&2; exit 2; }
cxx="${CXX:-g++}"
read -r -a flags <<<"${CXXFLAGS:--O2}"
reps="${REPS:-3}"
src="$root/bench/compile_cost/one_select.cpp"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed 's|#include <attnsel/attnsel.hpp>|#include <attnsel/all.hpp>|' "$src" >"$work/one_select_all.cpp"

# measure LABEL SOURCE EXTRA_FLAGS...: prints "LABEL  median-user-s  peak-MB"
measure() {
  local label="$1" file="$2"
  shift 2
  local times=() peak=0
  for ((i = 0; i < reps; ++i)); do
    /usr/bin/time -f "%U %M" -o "$work/time" "$cxx" -std=c++17 "${flags[@]}" "$@" -I"$root/include" -I"$generated" \
      -c "$file" -o "$work/out.o"
    read -r user kb <"$work/time"
    times+=("$user")
    ((kb > peak)) && peak=$kb
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((reps + 1) / 2))p")
  printf '| %-52s | %8s | %6d |\n' "$label" "$median" $((peak / 1024))
}
echo "$cxx $("$cxx" -dumpfullversion) ${flags[*]}, median of $reps"
printf '| %-52s | %8s | %6s |\n|---|---:|---:|\n' "translation unit" "user s" "peak MB"
measure "<attnsel/attnsel.hpp>, header-only" "$src"
[[ -f "$root/include/attnsel/all.hpp" ]] && measure "<attnsel/all.hpp>, header-only" "$work/one_select_all.cpp"
measure "<attnsel/attnsel.hpp>, compiled library" "$src" -DATTNSEL_COMPILED_LIB
