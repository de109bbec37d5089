#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: installs dependencies, builds the attnsel CLI and asks it a real question.
# Usage: scripts/run.sh [attnsel arguments...]
#   Without arguments: "on an MI300X (gfx942) serving gpt-oss (attention sinks), which decoder backend
#   runs, and why not the ones ranked above it?"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
cmake --preset dev -S "$root" >/dev/null
cmake --build "$root/build/dev" --target attnsel_cli >/dev/null
cli="$root/build/dev/tools/attnsel"
if (($# == 0)); then
  set -- explain --platform rocm --arch gfx942 --component aiter --head-size 64 --feature sinks
  echo "\$ attnsel $*" >&2
fi
exec "$cli" "$@"
