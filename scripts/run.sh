#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: installs dependencies, builds the attnsel CLI and asks it a real question.
# Usage: scripts/run.sh [-j N] [attnsel arguments...]
#   -j N, --jobs N: build with N parallel jobs (default: the number of cores)
#   Without attnsel arguments: "on an MI300X (gfx942) serving gpt-oss (attention sinks), which decoder
#   backend runs, and why not the ones ranked above it?"
# What it is doing, and the build's progress, go to stderr; stdout holds only the tool's answer.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"
case "${1:-}" in
  -j | --jobs)
    [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: $1 needs a positive number of jobs" >&2; exit 2; }
    jobs="$2"
    shift 2
    ;;
  -j[1-9]*)
    [[ "${1#-j}" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: $1: give -j N with a positive N" >&2; exit 2; }
    jobs="${1#-j}"
    shift
    ;;
esac
say() { printf 'run.sh: %s\n' "$*" >&2; }

say "checking the Debian packages attnsel needs (scripts/install-deps.sh)"
"$root/scripts/install-deps.sh" >&2
say "configuring build/dev (cmake --preset dev)"
cmake --preset dev -S "$root" >/dev/null
say "building the attnsel CLI with $jobs jobs (a first build takes 4 to 12 minutes on 2 cores; later ones seconds)"
cmake --build "$root/build/dev" --target attnsel_cli -j "$jobs" >&2
cli="$root/build/dev/tools/attnsel"
say "built $cli"
if (($# == 0)); then
  set -- explain --platform rocm --arch gfx942 --component aiter --head-size 64 --feature sinks
fi
echo "\$ attnsel $*" >&2
exec "$cli" "$@"
