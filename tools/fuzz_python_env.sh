#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes (once) the virtual environment the Python fuzzers run in and prints its interpreter's path.
#
# Usage: tools/fuzz_python_env.sh        (prints e.g. ~/.cache/attnsel/fuzz-venv-1a2b3c4d5e6f/bin/python)
# Environment:
#   ATTNSEL_FUZZ_PYTHON  the base interpreter (default /usr/bin/python3: the module in the build tree is
#                        built for it)
#   ATTNSEL_FUZZ_VENV    the venv's folder (default ~/.cache/attnsel/fuzz-venv-<hash>)
# The venv is this script's own: its name hashes the base interpreter's version and fuzz/py/requirements.txt,
# so a new pin or a new Python makes a new one. It is built with the requirements' hashes checked and
# wheels only (--require-hashes --only-binary=:all:), and a stamp file marks it complete: a second run
# installs nothing and prints the same path. Progress goes to stderr, the path alone to stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${ATTNSEL_FUZZ_PYTHON:-/usr/bin/python3}"
requirements="$root/fuzz/py/requirements.txt"
if ! version="$("$base" -c 'import sys; print(sys.version)' 2>/dev/null)"; then
  echo "fuzz_python_env.sh: no Python at '$base' (set ATTNSEL_FUZZ_PYTHON)" >&2
  exit 2
fi
key="$( (printf '%s\n%s\n' "$base" "$version"; cat "$requirements") | sha256sum | cut -c1-12)"
venv="${ATTNSEL_FUZZ_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/attnsel/fuzz-venv-$key}"
stamp="$venv/.attnsel-fuzz-$key"

if [[ ! -f "$stamp" ]]; then
  echo "fuzz_python_env.sh: creating $venv" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$base" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes \
    --only-binary=:all: -r "$requirements" >&2
  "$venv/bin/python" -c 'import atheris' >&2
  touch "$stamp"
fi
echo "$venv/bin/python"
