#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Differential oracle (docs/oracle.md): runs vLLM's and SGLang's own backend selection on a grid of
# mocked platforms and compares every answer with attnsel's built-in catalogs.
#
# Usage: scripts/oracle.sh [--sample N] [--engine vllm|sglang|all] [--out DIR] [--jobs N]
#   --sample N   a fixed-seed subset of N cases per engine (CI); default: the whole grid
# Exit: 0 every case agrees or is a known difference (tests/data/oracle/known_differences.json);
#       1 an unexplained disagreement, a case that could not be asked, or the engines do not install;
#       2 bad input (an argument, a grid, a pinned version that is not installed, no attnsel module).
# Environment: ATTNSEL_ORACLE_VENV (the venv, default ~/.cache/attnsel/oracle-venv),
#              ATTNSEL_PYTHONPATH (where `import attnsel` is found, default build/dev/python).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sample=""; out="$root/build/oracle"; engines="vllm sglang"; jobs=2
usage="usage: scripts/oracle.sh [--sample N] [--engine vllm|sglang|all] [--out DIR] [--jobs N]"
while [ $# -gt 0 ]; do
  case "$1" in
    --sample) sample="${2:?--sample needs a number}"; shift 2;;
    --out) out="${2:?--out needs a folder}"; shift 2;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2;;
    --engine)
      case "${2:-}" in
        vllm|sglang) engines="$2";; all) engines="vllm sglang";;
        *) echo "oracle.sh: error: --engine '${2:-}' is not one of vllm, sglang, all" >&2; exit 2;;
      esac; shift 2;;
    -h|--help) echo "$usage"; exit 0;;
    *) echo "oracle.sh: error: unknown argument '$1'; $usage" >&2; exit 2;;
  esac
done
for n in "$sample" "$jobs"; do
  case "$n" in ''|*[!0-9]*) [ -z "$n" ] || { echo "oracle.sh: error: '$n' is not a number; $usage" >&2; exit 2; };; esac
done
req="$root/tools/oracle/requirements.txt"
# The pins' content, not their path: a clone elsewhere on the machine re-uses the same venv.
hash=$(cat "$req" "$root/tools/oracle/cuda_stub.c" | sha256sum | cut -c1-12)
venv="${ATTNSEL_ORACLE_VENV:-$HOME/.cache/attnsel/oracle-venv}"
stamp="$venv/.attnsel-oracle-stamp"
# The stamp holds the hash of the pins it was installed from: equal, nothing runs; different, pip brings
# the venv to the new pins (only what changed is downloaded).
if [ "$(cat "$stamp" 2>/dev/null)" != "$hash" ]; then
  t0=$(date +%s)
  echo "oracle.sh: installing the pinned engines (tools/oracle/requirements.txt) into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$req" || {
    echo "oracle.sh: error: the engines could not be installed from $req into $venv (pip failed above);" \
         "the oracle cannot run without them" >&2
    exit 1
  }
  mkdir -p "$venv/oracle-stub"
  cc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$venv/oracle-stub/libcuda.so.1" "$root/tools/oracle/cuda_stub.c"
  echo "$hash" > "$stamp"
  echo "oracle.sh: venv installed in $(( $(date +%s) - t0 )) s ($(du -sh "$venv" | cut -f1))"
fi
for pin in vllm==0.33.0 sglang==0.5.23 torch==2.14.0; do
  name=${pin%%==*}; want=${pin##*==}
  have=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || echo none)
  [ "${have%%+*}" = "$want" ] || { echo "oracle.sh: error: $name $have is installed in $venv, the oracle pins $want" >&2; exit 2; }
done
py_attnsel="${ATTNSEL_PYTHONPATH:-$root/build/dev/python}"
[ -d "$py_attnsel/attnsel" ] || { echo "oracle.sh: error: no attnsel module in $py_attnsel: cmake --preset dev && cmake --build build/dev --target attnsel_python -j2" >&2; exit 2; }
mkdir -p "$out"
answers=()
for engine in $engines; do
  t0=$(date +%s)
  LD_LIBRARY_PATH="$venv/oracle-stub" "$venv/bin/python" "$root/tools/oracle/engine_$engine.py" \
    --grid "$root/tests/data/oracle/${engine}_grid.json" --out "$out/${engine}_answers.json" --jobs "$jobs" \
    ${sample:+--sample "$sample"}
  echo "oracle.sh: $engine's own selection took $(( $(date +%s) - t0 )) s"
  answers+=("$out/${engine}_answers.json")
done
# Each engine is checked against the catalog pinned to the release it runs (catalog/<engine>@<version>.json).
catalogs=()
for engine in $engines; do
  case "$engine" in vllm) pinned=vllm@0.33.0;; sglang) pinned=sglang@0.5.23;; esac
  file="$root/catalog/$pinned.json"
  [ -f "$file" ] || { echo "oracle.sh: error: no catalog $file for $engine's pinned release" >&2; exit 2; }
  catalogs+=(--catalog "$engine=$file")
done
status=0
PYTHONPATH="$py_attnsel" "$venv/bin/python" "$root/tools/oracle/compare.py" "${answers[@]}" --out "$out" \
  "${catalogs[@]}" || status=$?
echo "oracle.sh: report in $out/report.md and $out/report.json"
# The model plan's layer kinds against the pinned transformers' own config classes (vLLM reads their
# layer_types): the fixtures, and every family's defaults without layer_types.
# (transformers' own warnings about the class defaults are silenced; exit 1 keeps an earlier exit 2.)
TRANSFORMERS_VERBOSITY=error PYTHONPATH="$py_attnsel" "$venv/bin/python" "$root/tools/oracle/layer_kinds.py" \
  "$root/tests/data/model_configs" --out "$out/layer_kinds.json" || { [ "$status" -ne 0 ] || status=1; }
# vLLM's rules beyond one layer (Gemma 4's backend, hybrid block sizes), run in vLLM, against the plan's.
if [[ " $engines " == *" vllm "* ]]; then
  LD_LIBRARY_PATH="$venv/oracle-stub" TRANSFORMERS_VERBOSITY=error PYTHONPATH="$py_attnsel" "$venv/bin/python" \
    "$root/tools/oracle/plan_rules.py" --out "$out/vllm_plan_rules.json" || { [ "$status" -ne 0 ] || status=1; }
fi
# The engines' own argument parsers on every command line attnsel's adapters write.
for engine in $engines; do
  LD_LIBRARY_PATH="$venv/oracle-stub" PYTHONPATH="$py_attnsel" "$venv/bin/python" "$root/tools/oracle/adapter_flags.py" \
    --engine "$engine" --out "$out/${engine}_adapter_flags.json" || { [ "$status" -ne 0 ] || status=1; }
done
exit "$status"
