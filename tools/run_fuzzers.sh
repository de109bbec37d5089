#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (build-fuzz/) and runs each, and the atheris (Python) targets, for N seconds;
# non-zero on any finding.
#
# Usage: tools/run_fuzzers.sh [SECONDS_PER_TARGET]   (default 60; works from any directory)
# Environment:
#   ATTNSEL_FUZZ_TARGETS    space-separated subset of targets to run (default: all eight)
#   ATTNSEL_FUZZ_BUILD_DIR  build directory (default: <repo>/build-fuzz)
#   CC, CXX                 compilers for a fresh configure (default: clang, clang++)
#   ATTNSEL_FUZZ_PYTHONPATH a folder holding a built attnsel package for the py_* targets (default: the
#                           dev preset's build/dev/python, brought up to date, else the module built here)
# The py_* targets (fuzz/py_*.py) run under atheris in the venv tools/fuzz_python_env.sh makes once.
# Each target fuzzes a scratch copy of fuzz/corpus/<target> under <build>/fuzz-work/<target>/, so the
# repository is never written. Crash, leak, timeout and OOM inputs land in .../artifacts/; the log of
# each run is .../fuzz.log.
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "run_fuzzers.sh: SECONDS_PER_TARGET must be a positive integer, got '$seconds'" >&2
  echo "usage: $0 [SECONDS_PER_TARGET]" >&2
  exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTNSEL_FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=(${ATTNSEL_FUZZ_TARGETS:-fuzz_catalog fuzz_catalog_structured fuzz_override fuzz_platform fuzz_query fuzz_model_config
  py_tune_measurements py_engine_flags})

# Longest input per target: a catalog file may be large, the other inputs are one-line strings or a
# small JSON document.
max_len_for() {
  case "$1" in
    fuzz_catalog) echo $((1 << 20)) ;;
    fuzz_catalog_structured) echo 4096 ;;
    fuzz_override) echo 4096 ;;
    fuzz_platform) echo 1024 ;;
    fuzz_query) echo 65536 ;;
    fuzz_model_config) echo 65536 ;;
    py_tune_measurements) echo 65536 ;;
    py_engine_flags) echo 4096 ;;
    *) echo "run_fuzzers.sh: unknown target '$1'" >&2; return 1 ;;
  esac
}
for target in "${targets[@]}"; do max_len_for "$target" >/dev/null || exit 2; done

for tool in cmake ninja "${CXX:-clang++}"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run_fuzzers.sh: '$tool' not found on PATH" >&2
    exit 2
  fi
done

echo "== configure and build ($build)"
mkdir -p "$build"
configure_log="$build/fuzz-configure.log"
# Configuring again is cheap and idempotent; the compilers only matter for a fresh build directory.
CC="${CC:-clang}" CXX="${CXX:-clang++}" cmake -S "$root" -B "$build" -G Ninja \
  -DATTNSEL_BUILD_FUZZ=ON -DATTNSEL_BUILD_TESTS=OFF -DATTNSEL_BUILD_TOOLS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$configure_log" 2>&1 || {
  cat "$configure_log" >&2
  echo "run_fuzzers.sh: configure failed (log: $configure_log)" >&2
  exit 2
}
cxx_targets=()
py_targets=()
for target in "${targets[@]}"; do
  if [[ "$target" == py_* ]]; then py_targets+=("$target"); else cxx_targets+=("$target"); fi
done
if [[ ${#cxx_targets[@]} -gt 0 ]]; then
  cmake --build "$build" --target "${cxx_targets[@]}"
  echo "== replay the seed corpora and regressions once (ctest)"
  replay_regex="^($(IFS='|'; echo "${cxx_targets[*]}"))_replay\$"
  ctest --test-dir "$build" --output-on-failure -R "$replay_regex"
fi

# The Python targets: atheris in its own venv on Debian's python3, importing a built attnsel package.
if [[ ${#py_targets[@]} -gt 0 ]]; then
  echo "== Python fuzzers: venv and module"
  fuzz_python="$("$root/tools/fuzz_python_env.sh")"
  py_path="${ATTNSEL_FUZZ_PYTHONPATH:-}"
  if [[ -z "$py_path" && -f "$root/build/dev/build.ninja" ]]; then
    cmake --build "$root/build/dev" --target attnsel_python  # a no-op when the dev build is current
    py_path="$root/build/dev/python"
  elif [[ -z "$py_path" ]]; then
    cmake --build "$build" --target attnsel_python
    py_path="$build/python"
  fi
  if ! PYTHONPATH="$py_path" "$fuzz_python" -c 'import attnsel.tune, attnsel.engines.vllm' >/dev/null; then
    echo "run_fuzzers.sh: no importable attnsel package in '$py_path' for $fuzz_python" >&2
    exit 2
  fi
fi

# halt_on_error makes any UBSan report fatal even if a flag is lost; symbolize for readable traces.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:symbolize=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1:symbolize=1"

failed=()
summary=()
for target in "${targets[@]}"; do
  work="$build/fuzz-work/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  for seeds in "$root/fuzz/corpus/$target" "$root/fuzz/regressions/$target"; do
    if [[ -d "$seeds" ]]; then cp -R "$seeds/." "$work/corpus/"; fi
  done
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len_for "$target")"
        -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$work/artifacts/")
  if [[ -f "$root/fuzz/dict/$target.dict" ]]; then
    args+=(-dict="$root/fuzz/dict/$target.dict")
  fi

  echo "== $target: ${seconds}s, corpus $(ls "$work/corpus" | wc -l) seeds"
  status=0
  if [[ "$target" == py_* ]]; then
    PYTHONPATH="$py_path" "$fuzz_python" "$root/fuzz/$target.py" "${args[@]}" "$work/corpus" >"$work/fuzz.log" 2>&1 ||
      status=$?
  else
    "$build/fuzz/$target" "${args[@]}" "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?
  fi

  # Status lines read "#N <event> cov: C ft: F corp: ..." (the last is DONE on a clean run); the final
  # stats give the number of runs and exec/s.
  done_line="$(grep -E '^#[0-9]+[[:space:]].* cov: ' "$work/fuzz.log" | tail -n 1 || true)"
  execs="$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$work/fuzz.log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$work/fuzz.log" | tail -n 1)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")"
  corpus_size="$(ls "$work/corpus" | wc -l)"

  problems=""
  [[ $status -ne 0 ]] && problems+=" exit=$status"
  if grep -qE 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|invariant violated|SUMMARY: |Uncaught Python exception' "$work/fuzz.log"; then
    problems+=" sanitizer/invariant report"
  fi
  artifacts="$(find "$work/artifacts" -type f | sort)"
  [[ -n "$artifacts" ]] && problems+=" artifacts"

  line="$(printf '%-20s execs=%-9s exec/s=%-7s cov=%-5s ft=%-6s corpus=%s' "$target" "${execs:-?}" "${rate:-?}" \
          "${cov:-?}" "${ft:-?}" "$corpus_size")"
  if [[ -n "$problems" ]]; then
    failed+=("$target")
    summary+=("$line  FAILED:$problems")
    echo "-- $target FAILED:$problems (log: $work/fuzz.log)"
    grep -E -m 20 -A 25 'runtime error:|ERROR: |invariant violated|terminate called|Uncaught Python exception' \
      "$work/fuzz.log" | head -n 60 || true
    while IFS= read -r a; do
      [[ -z "$a" ]] && continue
      echo "   reproducer: $a"
      if [[ "$target" == py_* ]]; then
        echo "   replay:     PYTHONPATH=$py_path $fuzz_python $root/fuzz/$target.py '$a'"
      else
        echo "   replay:     $build/fuzz/$target '$a'"
      fi
    done <<<"$artifacts"
  else
    summary+=("$line  ok")
    echo "-- $target ok"
  fi
done

echo
echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_fuzzers.sh: findings in: ${failed[*]}" >&2
  echo "Add each reproducer to fuzz/regressions/<target>/ (see docs/fuzzing.md)." >&2
  exit 1
fi
