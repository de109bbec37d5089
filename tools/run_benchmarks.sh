#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the benchmarks (Release), runs them and prints the table: tools/run_benchmarks.sh [Google Benchmark flags]
#
# Writes build-bench/results.json (Google Benchmark JSON, median/mean/stddev of REPS repetitions) and,
# when valgrind is installed, build-bench/instructions.json (callgrind instructions per operation).
# Environment: ATTNSEL_BENCH_BUILD (build directory), REPS (repetitions, default 5),
# ITERATIONS (driver iterations per callgrind run, default 20000), NO_CALLGRIND=1 to skip instruction counts.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ATTNSEL_BENCH_BUILD:-$root/build-bench}
reps=${REPS:-5}
iterations=${ITERATIONS:-20000}

generator=""
if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
# shellcheck disable=SC2086  # $generator is empty or two words on purpose
cmake -S "$root" -B "$build" $generator -DCMAKE_BUILD_TYPE=Release -DATTNSEL_BUILD_BENCH=ON \
  -DATTNSEL_BUILD_TESTS=OFF -DATTNSEL_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" --target attnsel_bench attnsel_select_driver

echo "== machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/attnsel_bench" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_out="$build/results.json" --benchmark_out_format=json "$@"

# Instruction counts: the driver runs N selections; (Ir(N) - Ir(0)) / N cancels start-up exactly.
instructions="$build/instructions.json"
if [ "${NO_CALLGRIND:-0}" != 1 ] && command -v valgrind >/dev/null 2>&1; then
  driver="$build/bench/attnsel_select_driver"
  collected() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  }
  echo "[" > "$instructions"
  sep=""
  for spec in cuda90_decoder:select rocm942_sinks:select cuda90_forced_triton:select cuda100_mla:select \
              cuda90_encoder:select fail_rocm942_forced:select fail_cuda90_no_backend:select \
              fail_unknown_name:select cuda90_decoder:explain rocm942_sinks:explain cuda100_mla:explain \
              cuda90_decoder:bound rocm942_sinks:bound cuda90_forced_triton:bound cuda100_mla:bound \
              cuda90_encoder:bound cuda90_decoder:cached rocm942_sinks:cached cuda90_forced_triton:cached \
              cuda100_mla:cached cuda90_encoder:cached cuda90_decoder:decide rocm942_sinks:decide \
              cuda90_decoder:startup; do
    name=${spec%%:*}
    op=${spec##*:}
    n=$iterations
    flag=""
    # The slow paths are ~10x dearer: fewer iterations give the same precision.
    case "$name:$op" in fail_*|*:explain) n=$((iterations / 10)) ;; *:startup) n=$((iterations / 100)) ;; esac
    if [ "$op" != select ]; then flag="--$op"; fi
    # shellcheck disable=SC2086
    base=$(collected "$driver" 0 "$name" $flag)
    # shellcheck disable=SC2086
    full=$(collected "$driver" "$n" "$name" $flag)
    printf '%s  {"case": "%s", "op": "%s", "iterations": %s, "instructions_per_op": %s}' "$sep" "$name" "$op" "$n" \
      "$(( (full - base) / n ))" >> "$instructions"
    sep=",
"
  done
  printf '\n]\n' >> "$instructions"
else
  rm -f "$instructions"
fi

if command -v python3 >/dev/null 2>&1; then
  python3 - "$build/results.json" "$instructions" <<'EOF'
import json, os, sys

def fmt_time(ns):
    return f"{ns:,.1f} ns" if ns < 10_000 else f"{ns / 1000:,.1f} µs"

results = json.load(open(sys.argv[1]))
to_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
rows = [b for b in results["benchmarks"] if b.get("aggregate_name", "median") == "median"]
ctx = results["context"]
print(f"\n{ctx['date']}  {ctx['num_cpus']} CPUs @ {ctx['mhz_per_cpu']} MHz, median of "
      f"{rows[0].get('repetitions', 1) if rows else 0} repetitions\n")
print("| benchmark | CPU time | real time | allocs/op | bytes/op | items/s |")
print("|---|---:|---:|---:|---:|---:|")
for b in rows:
    if b.get("error_occurred"):
        print(f"| {b['run_name']} | ERROR: {b.get('error_message', '')} | | | | |")
        continue
    scale = to_ns[b.get("time_unit", "ns")]
    allocs = b.get("allocs/op")
    nbytes = b.get("bytes/op")
    items = b.get("items_per_second")
    print(f"| {b['run_name']} | {fmt_time(b['cpu_time'] * scale)} | {fmt_time(b['real_time'] * scale)} | "
          f"{'' if allocs is None else f'{allocs:,.0f}'} | {'' if nbytes is None else f'{nbytes:,.0f}'} | "
          f"{'' if items is None else f'{items / 1e6:,.2f} M'} |")

if os.path.exists(sys.argv[2]):
    print("\n| case | op | instructions/op (callgrind) |")
    print("|---|---|---:|")
    for r in json.load(open(sys.argv[2])):
        print(f"| {r['case']} | {r['op']} | {r['instructions_per_op']:,} |")
EOF
fi
echo "results: $build/results.json"
if [ -f "$instructions" ]; then echo "instructions: $instructions"; fi
