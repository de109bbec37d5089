#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/backends.md from the built-in catalogs: tools/gen_backends_doc.sh [PATH/TO/attnsel]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-${ATTNSEL_CLI:-$root/build/tools/attnsel}}
if [ ! -x "$cli" ]; then
  echo "gen_backends_doc.sh: no attnsel executable at '$cli'; build the attnsel_cli target or pass its path" >&2
  exit 2
fi
out="$root/docs/backends.md"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# Same layout cmake/check_backends_doc.cmake expects: the vllm matrix, one blank line, the torch_sdpa matrix.
{
  "$cli" matrix --catalog vllm --format markdown
  echo
  "$cli" matrix --catalog torch_sdpa --format markdown
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out"
