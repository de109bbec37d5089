#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: installs dependencies, then builds and runs every suite.
# Usage: scripts/test.sh [quick|full]   (default full)
#   quick: the dev workflow (both library modes, CLI, docs freshness, the four consumer projects)
#   full:  quick + the suites built with clang (C++20, compiled library, clang-tidy) under AddressSanitizer
#          and UBSan + the threaded suites under ThreadSanitizer + every fuzzer for FUZZ_SECONDS (default 30)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-full}"
cd "$root"
scripts/install-deps.sh

set -o pipefail
step() { printf '\n=== %s ===\n' "$*"; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

step "format: every C++ source matches .clang-format"
tools/check_format.sh

# First, as a new user would: the README's fresh-machine blocks in their order (main job, install, module,
# wheel). The dev workflow below reuses what they built in build/dev.
step "README order: the fresh-machine blocks of README.md as written"
python3 tests/readme_order.py | tee -a "$log"

step "dev workflow: configure, build, ctest"
cmake --workflow --preset dev | tee -a "$log"
# ctest shows a passing test's output only in its log: print the examples' count (none silently skipped).
grep -h "^doc examples:" build/dev/Testing/Temporary/LastTest*.log | tail -1 | tee -a "$log" || true

if [[ "$mode" == "full" ]]; then
  # The engines' own selection code against the catalogs pinned to their releases (docs/oracle.md), on
  # both whole grids. Any disagreement that is not a named known difference, or a case that could not be
  # asked, fails the step; so does an engine that does not install.
  step "oracle: vLLM 0.33.0 and SGLang 0.5.23, whole grids"
  scripts/oracle.sh --out build/oracle | tee -a "$log"

  # attnsel.torch against a real torch: the oracle venv's torch 2.14.0 (CPU here), the module of the dev
  # build, and attnsel._torch_call built against that torch (select_sdpa's call key read in C++).
  step "attnsel.torch: tests/python/test_torch.py under the oracle venv's torch, the C++ call key built for it"
  venv="${ATTNSEL_ORACLE_VENV:-$HOME/.cache/attnsel/oracle-venv}"
  cmake -S . -B build/dev -DATTNSEL_TORCH_PYTHON="$venv/bin/python" > /dev/null
  cmake --build build/dev -j2 --target attnsel_torch_call
  ctest --test-dir build/dev -R '^python_torch_tests$' --output-on-failure --no-tests=error | tee -a "$log"

  step "clang-asan: a second compiler, C++20, the compiled library, clang-tidy, AddressSanitizer + UBSan"
  cmake --workflow --preset clang-asan | tee -a "$log"
  step "ThreadSanitizer: the suites that start threads"
  cmake --workflow --preset tsan | tee -a "$log"
  step "fuzzers (${FUZZ_SECONDS:-30}s each)"
  tools/run_fuzzers.sh "${FUZZ_SECONDS:-30}" | tee -a "$log"
fi

# Any failure above has already stopped the script (set -e, pipefail); count what ran.
tests=$(awk '/tests passed, 0 tests failed out of/ { n += $NF } END { print n + 0 }' "$log")
fuzzers=$(grep -cE '^-- (fuzz|py)_[a-z_]* ok$' "$log" || true)
step "all suites passed ($mode): $tests ctest tests, $fuzzers fuzzers"
echo "attnsel: $((tests + fuzzers)) passed, 0 failed"
