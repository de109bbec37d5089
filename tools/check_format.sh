#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks (or with --fix, applies) .clang-format on every C++ source the project owns; exit 1 on drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
clang_format="${CLANG_FORMAT:-clang-format}"
mapfile -t files < <(git ls-files -- 'include/*.hpp' 'compat/*.hpp' 'src/*.cpp' 'tools/*.cpp' 'tools/*.hpp' 'tests/*.cpp' \
                       'tests/*.hpp' 'bench/*.cpp' 'bench/*.hpp' 'fuzz/*.cpp' 'fuzz/*.hpp' 'examples/*.cpp' \
                       'python/*.cpp' 'python/*.hpp')
if [[ "${1:-}" == "--fix" ]]; then
  "$clang_format" -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
if ! "$clang_format" --dry-run --Werror "${files[@]}"; then
  echo "check_format: the files above drift from .clang-format; run tools/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files match .clang-format"
