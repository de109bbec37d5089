#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test command: installs dependencies, then builds and runs every suite.
# Usage: scripts/test.sh [quick|full]   (default full)
#   quick: the dev workflow (both library modes, CLI, docs freshness, the three consumer projects)
#   full:  quick + AddressSanitizer/UBSan + ThreadSanitizer + every fuzzer for FUZZ_SECONDS (default 60)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-full}"
cd "$root"
scripts/install-deps.sh

step() { printf '\n=== %s ===\n' "$*"; }

step "dev workflow: configure, build, ctest"
cmake --workflow --preset dev

if [[ "$mode" == "full" ]]; then
  step "AddressSanitizer + UndefinedBehaviorSanitizer"
  cmake --workflow --preset asan
  step "ThreadSanitizer"
  cmake --workflow --preset tsan
  step "fuzzers (${FUZZ_SECONDS:-60}s each)"
  tools/run_fuzzers.sh "${FUZZ_SECONDS:-60}"
fi
step "all suites passed ($mode)"
