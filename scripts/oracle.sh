#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Differential oracle (docs/oracle.md): runs vLLM's own backend selection on a grid of mocked
# platforms and compares it with attnsel. Usage: scripts/oracle.sh [--sample N] [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sample=""; out="$root/build/oracle"
while [ $# -gt 0 ]; do
  case "$1" in
    --sample) sample="${2:?--sample needs a number}"; shift 2;;
    --out) out="${2:?--out needs a folder}"; shift 2;;
    *) echo "oracle.sh: error: unknown argument '$1' (--sample N, --out DIR)" >&2; exit 2;;
  esac
done
case "$sample" in ''|*[!0-9]*) [ -z "$sample" ] || { echo "oracle.sh: error: --sample '$sample' is not a number" >&2; exit 2; };; esac
req="$root/tools/oracle/requirements.txt"
hash=$(sha256sum "$req" "$root/tools/oracle/cuda_stub.c" | sha256sum | cut -c1-12)
venv="${ATTNSEL_ORACLE_VENV:-$HOME/.cache/attnsel/oracle-venv-$hash}"
stamp="$venv/.attnsel-oracle-stamp"
if [ "$(cat "$stamp" 2>/dev/null)" != "$hash" ]; then
  t0=$(date +%s)
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --no-deps -r "$req" || { echo "oracle.sh: error: installing $req into $venv failed" >&2; exit 1; }
  mkdir -p "$venv/oracle-stub"
  cc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$venv/oracle-stub/libcuda.so.1" "$root/tools/oracle/cuda_stub.c"
  echo "$hash" > "$stamp"
  echo "oracle.sh: venv $venv installed in $(( $(date +%s) - t0 )) s ($(du -sh "$venv" | cut -f1))"
fi
for pin in vllm==0.33.0 sglang==0.5.23 torch==2.14.0; do
  name=${pin%%==*}; want=${pin##*==}
  have=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || echo none)
  [ "${have%%+*}" = "$want" ] || { echo "oracle.sh: error: $name $have is installed in $venv, the oracle pins $want" >&2; exit 2; }
done
py_attnsel="$root/build/dev/python"
[ -d "$py_attnsel/attnsel" ] || { echo "oracle.sh: error: no attnsel module in $py_attnsel: cmake --preset dev && cmake --build build/dev --target attnsel_python -j2" >&2; exit 2; }
mkdir -p "$out"
t0=$(date +%s)
LD_LIBRARY_PATH="$venv/oracle-stub" "$venv/bin/python" "$root/tools/oracle/engine_vllm.py" \
  --grid "$root/tests/data/oracle/vllm_grid.json" --out "$out/vllm_answers.json" ${sample:+--sample "$sample"}
echo "oracle.sh: vllm engine side took $(( $(date +%s) - t0 )) s"
PYTHONPATH="$py_attnsel" "$venv/bin/python" "$root/tools/oracle/compare.py" "$out/vllm_answers.json" --out "$out"
