#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One GPU-host session (the lent H200: a short lease, so the build and every measurement run in one
# command): builds the dev preset with the venv's Python, runs ctest, attnsel.tune on the LLM and ViT
# presets, the torch agreement sweep in both cuDNN modes, the Python timings, and the libtorch
# side-by-side timing in both modes.
# Usage (repository root, CUDA + torch in the active Python): OUT=DIR tools/gpu_round.sh [--quick] [STEP...]
#   (the files come back packed: DIR/gpu_round.tgz)
#   --quick: a lease with little time left: builds only the Python module, skips ctest, and bounds each
#            measurement (agreement sweeps first), so what finished comes back under $OUT.
#   STEP...: only these of ctest tune verify e2e agree python side (default: all). The build always runs
#            first (incremental on a warm machine; only the Python module when no step needs more), so
#            one lease can be split over calls of at most ten minutes each: `tune verify`, then `e2e`.
#   tune:    attnsel.tune on the LLM and ViT presets in both cuDNN modes (measured-preferred.json,
#            measured-deprioritized.json; each overlay holds for the mode it was measured in).
#   verify:  each overlay re-timed in a process of its own, in its mode, on the tuned classes and on the
#            held-out preset (other models' layers).
#   TUNE_BUDGET, VERIFY_BUDGET: seconds of measurement per tuning run (240: the llm+vit preset's second
#            passes need about that with 5 ms samples) and per verify run (120).
#   MODES:   the cuDNN modes of tune, verify and e2e (default "preferred deprioritized").
#   FAMILIES: kernel families timed and routed beside SDPA's backends by tune, verify and e2e (default
#            "flex,eager": FlexAttention and transformers' eager attention; FAMILIES= for SDPA's alone).
#   CUDA_GRAPHS=1: tune and verify time CUDA graph replays (--cuda-graphs) instead of queued calls;
#   LAUNCHED=1: as Python launches them (--launched).
#   e2e:     bench/e2e_model.py in both modes with that mode's overlay (from tune in the same call, else
#            from an earlier call on the same machine, kept in /tmp/attnsel-round, else the committed
#            catalog/measured/*-MODE.json: each call starts with an empty work folder), the
#            routing's per-call cost (cuDNN preferred), and with E2E_COMPILE=1 the compiled 4k prefill.
#            E2E_REPS multiplies its repetitions (default 1); E2E_SECONDS bounds each mode under --quick (280).
#   AGREE_SECONDS: --quick's bound on each agreement sweep (default 110 s cuDNN preferred, 90 s deprioritized);
#   PYTHON_SECONDS: --quick's bound on the Python timings (default 20 s).
set -uo pipefail
# Every file goes to a work folder, packed at exit into one $OUT/gpu_round.tgz: the device tool brings
# back at most 8 files, and a round writes more (a round once came back empty).
RESULT_DIR="${OUT:-/tmp/attnsel-gpu}"
mkdir -p "$RESULT_DIR"
OUT="$(mktemp -d)"
trap 'tar czf "$RESULT_DIR/gpu_round.tgz" -C "$OUT" .' EXIT
PY="$(command -v python3)"
JOBS="$(nproc)"
step() { printf '\n=== %s (%ss)\n' "$*" "$SECONDS"; }
QUICK=0
[[ "${1:-}" == "--quick" ]] && { QUICK=1; shift; }
ALL="ctest tune verify e2e agree python side"
STEPS=" ${*:-$ALL} "
for s in $STEPS; do
  [[ " $ALL " == *" $s "* ]] || { echo "unknown step '$s' ($ALL)" >&2; exit 2; }
done
wants() { [[ "$STEPS" == *" $1 "* ]]; }
# bounded SECONDS CMD...: the whole command under --quick, with a time limit
bounded() { local s="$1"; shift; if ((QUICK)); then timeout "$s" "$@"; else "$@"; fi; }
TARGETS=()
((QUICK)) && TARGETS=(--target attnsel_python)
[[ "$STEPS" == *" ctest "* || "$STEPS" == *" python "* || "$STEPS" == *" side "* ]] || TARGETS=(--target attnsel_python)

step "build (dev preset, ${PY})"
cmake --preset dev -DATTNSEL_TEST_CONSUMERS=OFF -DPython3_EXECUTABLE="$PY" \
  -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build/dev -j"$JOBS" "${TARGETS[@]}" >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$OUT/build.log" | head -60; exit 1; }

if ((!QUICK)) && wants ctest; then
  step "ctest"
  ctest --test-dir build/dev -j"$JOBS" --output-on-failure >"$OUT/ctest.log" 2>&1
  echo "ctest rc=$?"
  grep -E "tests passed|\(Failed\)" "$OUT/ctest.log"
fi

export PYTHONPATH=build/dev/python
read -r -a MODES <<<"${MODES:-preferred deprioritized}"  # MODES=preferred: one cuDNN mode only
FAMILIES="${FAMILIES-flex,eager}"
FAM=()
[[ -n "$FAMILIES" ]] && FAM=(--families "$FAMILIES")
[[ "${CUDA_GRAPHS:-0}" == 1 ]] && FAM+=(--cuda-graphs)
[[ "${LAUNCHED:-0}" == 1 ]] && FAM+=(--launched)
mode_env() { [[ "$1" == deprioritized ]] && echo 1 || echo 0; }
if wants tune; then
for m in "${MODES[@]}"; do
  step "attnsel.tune: LLM decoder and ViT presets, cuDNN $m"
  TORCH_CUDNN_SDPA_DEPRIORITIZED="$(mode_env "$m")" bounded "$(( ${TUNE_BUDGET:-240} + 150 ))" "$PY" -m attnsel.tune \
    --preset llm+vit "${FAM[@]}" --budget "${TUNE_BUDGET:-240}" --out "$OUT/measured-$m.json" --report "$OUT/tuning-$m.md" \
    --json "$OUT/tuning-$m.json" >"$OUT/tune-$m.log" 2>&1
  echo "tune rc=$?"
  # Kept on the machine for a later call of the same lease (each call's work folder starts empty).
  mkdir -p /tmp/attnsel-round && cp "$OUT/measured-$m.json" /tmp/attnsel-round/ 2>/dev/null
  sed -n '/^Geometric-mean/,$p' "$OUT/tuning-$m.md" 2>/dev/null | head -60 || tail -20 "$OUT/tune-$m.log"
done
fi
overlay_of() {  # this call's overlay, else one an earlier call of this lease tuned, else the committed one
  if [[ -f "$OUT/measured-$1.json" ]]; then echo "$OUT/measured-$1.json"
  elif [[ -f "/tmp/attnsel-round/measured-$1.json" ]]; then echo "/tmp/attnsel-round/measured-$1.json"
  else ls catalog/measured/*"$1"*.json 2>/dev/null | grep -v measurements | head -1; fi
}
if wants verify; then
for m in "${MODES[@]}"; do
  ov="$(overlay_of "$m")"
  [[ -n "$ov" ]] || { echo "verify: no overlay for cuDNN $m"; continue; }
  for p in heldout llm+vit; do
    step "verify $ov on $p, cuDNN $m (a process of its own)"
    TORCH_CUDNN_SDPA_DEPRIORITIZED="$(mode_env "$m")" bounded "$(( ${VERIFY_BUDGET:-120} + 30 ))" "$PY" -m attnsel.tune \
      --preset "$p" --verify "$ov" "${FAM[@]}" --budget "${VERIFY_BUDGET:-120}" --report "$OUT/verify-$m-$p.md" --json "$OUT/verify-$m-$p.json" >"$OUT/verify-$m-$p.log" 2>&1
    echo "verify rc=$?"
    grep -E "^Geometric-mean|^Tuned time" "$OUT/verify-$m-$p.md" 2>/dev/null || tail -5 "$OUT/verify-$m-$p.log"
  done
done
fi
if wants e2e; then
for m in "${MODES[@]}"; do
  ov="$(overlay_of "$m")"
  extra=()
  [[ "$m" == preferred ]] && extra=(--overhead ${E2E_COMPILE:+--compile})
  step "end to end: Llama-3-8B-shaped model, 8 layers, cuDNN $m, overlay ${ov:-none}"
  TORCH_CUDNN_SDPA_DEPRIORITIZED="$(mode_env "$m")" bounded "${E2E_SECONDS:-280}" "$PY" bench/e2e_model.py \
    ${ov:+--overlay "$ov"} --families "$FAMILIES" --reps "${E2E_REPS:-1}" --json "$OUT/e2e-$m.json" "${extra[@]}" 2>&1 | grep -v "^W[0-9]" | tee "$OUT/e2e-$m.txt"
done
fi
if wants agree; then
step "torch agreement, cuDNN preferred"
bounded "${AGREE_SECONDS:-110}" "$PY" tools/torch_agreement.py --json "$OUT/agree_preferred.json" >"$OUT/agree_preferred.txt" 2>&1
grep -E "^torch |^sdp priority|^configurations" "$OUT/agree_preferred.txt"
step "torch agreement, TORCH_CUDNN_SDPA_DEPRIORITIZED=1"
TORCH_CUDNN_SDPA_DEPRIORITIZED=1 bounded "${AGREE_SECONDS:-90}" "$PY" tools/torch_agreement.py --json "$OUT/agree_deprioritized.json" \
  >"$OUT/agree_deprioritized.txt" 2>&1
grep -E "^sdp priority|^configurations" "$OUT/agree_deprioritized.txt"
fi

if wants python; then
step "Python timings (select, select_sdpa, torch._fused_sdp_choice)"
bounded "${PYTHON_SECONDS:-20}" "$PY" bench/python_select.py --torch --json "$OUT/python_select.json" >"$OUT/python_select.txt" 2>&1
tail -30 "$OUT/python_select.txt"
fi

if wants side; then
step "libtorch side by side"
TD="$("$PY" -c 'import torch,os;print(os.path.dirname(torch.__file__))')"
ABI="$("$PY" -c 'import torch;print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"
CAP="$("$PY" -c 'import torch;print(*torch.cuda.get_device_capability())')"
CUDNN="$("$PY" -c 'import torch;print(torch.backends.cudnn.version())')"
cmake -S bench/torch -B /tmp/attnsel-bt -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_DIR="$TD" \
  -DTORCH_CXX11_ABI="$ABI" >"$OUT/bt_configure.log" 2>&1 &&
  cmake --build /tmp/attnsel-bt -j"$JOBS" >"$OUT/bt_build.log" 2>&1 || { tail -30 "$OUT/bt_build.log"; exit 1; }
# shellcheck disable=SC2086
/tmp/attnsel-bt/torch_side_by_side $CAP "$CUDNN" 200000 | tee "$OUT/side_by_side_preferred.txt"
# shellcheck disable=SC2086
TORCH_CUDNN_SDPA_DEPRIORITIZED=1 /tmp/attnsel-bt/torch_side_by_side $CAP "$CUDNN" 200000 |
  tee "$OUT/side_by_side_deprioritized.txt"
fi
step "done"
