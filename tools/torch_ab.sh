#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A/B of the libtorch side by side (bench/torch/side_by_side.cpp) on the GPU host: a base tree against the
# working tree, both built in this command, then base / new / base / new in each cuDNN mode, so that a
# lease's drift moves both alike. Figures of a bound select move by a fifth between leases: compare only
# within one run of this script.
# Usage (repository root, CUDA + torch in the active Python):
#   git archive REV | (mkdir -p .base_REV && tar x -C .base_REV)   # on the workstation: untracked, carried
#   OUT=DIR tools/torch_ab.sh .base_REV
set -uo pipefail
BASE="${1:?usage: tools/torch_ab.sh BASE_TREE_DIR}"
[[ -f "$BASE/bench/torch/side_by_side.cpp" ]] || { echo "$BASE holds no bench/torch/side_by_side.cpp" >&2; exit 2; }
OUT="${OUT:-/tmp/attnsel-ab}"
mkdir -p "$OUT"
PY="$(command -v python3)"
TD="$("$PY" -c 'import torch,os;print(os.path.dirname(torch.__file__))')"
ABI="$("$PY" -c 'import torch;print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"
CAP="$("$PY" -c 'import torch;print(*torch.cuda.get_device_capability())')"
CUDNN="$("$PY" -c 'import torch;print(torch.backends.cudnn.version())')"
nvidia-smi --query-gpu=name --format=csv,noheader
"$PY" -c 'import torch;print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'
for t in new base; do
  src=.
  [[ $t == base ]] && src="$BASE"
  if ! cmake -S "$src/bench/torch" -B "/tmp/attnsel-ab-$t" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_DIR="$TD" \
    -DTORCH_CXX11_ABI="$ABI" >"$OUT/$t-configure.log" 2>&1; then
    tail -30 "$OUT/$t-configure.log"
    exit 1
  fi
  cmake --build "/tmp/attnsel-ab-$t" -j"$(nproc)" >"$OUT/$t-build.log" 2>&1 || { tail -30 "$OUT/$t-build.log"; exit 1; }
done
read -r -a CAPS <<<"$CAP"
for mode in preferred deprioritized; do
  run=0
  for t in base new base new; do
    run=$((run + 1))
    echo "== $t, cuDNN $mode"
    if [[ $mode == deprioritized ]]; then
      TORCH_CUDNN_SDPA_DEPRIORITIZED=1 "/tmp/attnsel-ab-$t/torch_side_by_side" "${CAPS[@]}" "$CUDNN" 200000
    else
      "/tmp/attnsel-ab-$t/torch_side_by_side" "${CAPS[@]}" "$CUDNN" 200000
    fi >"$OUT/$mode-$run-$t.txt"
    grep -E "^\| |choice|same" "$OUT/$mode-$run-$t.txt"
  done
done
