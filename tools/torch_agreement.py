#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Agreement sweep: attnsel.torch's SDPA choice against torch._fused_sdp_choice over many CUDA configurations.
"""Usage: PYTHONPATH=<build>/python python3 tools/torch_agreement.py [--json FILE] [--device cuda]
                                                                   [--platform-from detect|torch]
       PYTHONPATH=<build>/python python3 tools/torch_agreement.py --replay FILE [--json FILE]

Compares attnsel.torch.select_sdpa (torch_sdpa catalog; the platform from attnsel.detect_platform(),
no component typed by hand, or with --platform-from torch from attnsel.torch.platform()) with
torch._fused_sdp_choice over a grid of realistic SDPA calls on CUDA tensors, then runs
F.scaled_dot_product_attention inside attnsel.torch.use_backend(choice) to check that the chosen kernel
really runs. The grid (over 3,000 calls):
  - dtypes x (q/k, v) head dims x {plain, causal, bool mask, float mask, dropout} x {MHA, GQA 8/2} x
    sequence shapes {square 128, prefill 64x256, decode 1x256, key length 1 (16x1), q longer than k
    (256x64), 1x1};
  - training (requires_grad) and deterministic mode (torch.use_deterministic_algorithms) on a subgrid;
  - batch 1 on a subgrid.
Prints a summary and every disagreement; --json writes every row. Run it once with and once without
TORCH_CUDNN_SDPA_DEPRIORITIZED=1 (PyTorch reads the variable once per process).

Each row records the attnsel query and the platform as JSON, so --replay FILE asks today's torch_sdpa
catalog again about a recorded sweep, with no GPU and no torch: the recorded torch choice is the
reference, and the summary counts agreement as before (the "ran" column is the recorded one).
"""
import argparse
import itertools
import json
import signal
import sys

import attnsel

if "--replay" not in sys.argv:
    import torch
    from torch.nn.attention import SDPBackend

    import attnsel.torch as at

DTYPES = [torch.float16, torch.bfloat16, torch.float32]
# (q/k head dim, v head dim): aligned and unaligned dims, fp32-only alignment (4, 12, 100), dims past 256,
# and value dims that differ from the query's.
HEAD_DIMS = [(4, 4), (12, 12), (16, 16), (64, 64), (72, 72), (100, 100), (128, 128), (160, 160), (192, 192),
             (256, 256), (264, 264), (64, 128), (128, 64), (192, 128), (256, 128), (320, 320)]
MODES = ["plain", "causal", "bool_mask", "float_mask", "dropout"]
GQA = [False, True]
# (query length, key length): square, prefill over a cache, decode, key length 1, query longer, 1x1.
SEQS = [(128, 128), (64, 256), (1, 256), (16, 1), (256, 64), (1, 1)]
SUB_HEADS = [(12, 12), (64, 64), (128, 128), (192, 192), (256, 256), (64, 128)]
SUB_MODES = ["plain", "causal", "bool_mask", "dropout"]
SUB_SEQS = [(128, 128), (1, 256), (16, 1), (256, 64)]


def grid():
    """(dtype, (d, dv), mode, gqa, (sq, sk), batch, extra) for every call of the sweep."""
    for dtype, dims, mode, gqa, seqs in itertools.product(DTYPES, HEAD_DIMS, MODES, GQA, SEQS):
        yield dtype, dims, mode, gqa, seqs, 2, None
    for extra in ("train", "deterministic"):
        for dtype, dims, mode, gqa, seqs in itertools.product(DTYPES, SUB_HEADS, SUB_MODES, GQA, SUB_SEQS):
            yield dtype, dims, mode, gqa, seqs, 2, extra
    for dtype, dims, mode, seqs in itertools.product(DTYPES, SUB_HEADS, SUB_MODES, SUB_SEQS):
        yield dtype, dims, mode, False, seqs, 1, None


def torch_name(index: int) -> str:
    for name, member in SDPBackend.__members__.items():
        if member.value == index:
            return name
    return f"<{index}>"


def summarize(rows) -> tuple:
    agree = sum(r["agree"] for r in rows)
    ran = sum(r["ran"] for r in rows)
    print(f"configurations: {len(rows)}; agree: {agree} ({100.0 * agree / max(len(rows), 1):.1f}%); "
          f"disagree: {len(rows) - agree}; chosen backend ran under use_backend: {ran}/{len(rows)}")
    for r in rows:
        if not r["agree"] or not r["ran"]:
            print("  " + json.dumps({k: v for k, v in r.items() if k != "query"}))
    return agree, ran


def replay(path: str, out) -> int:
    """Asks today's catalog about every recorded call; the recorded torch choice stays the reference."""
    with open(path) as f:
        doc = json.load(f)
    reg = attnsel.torch_sdpa_registry()
    platform = attnsel.Platform.from_json(json.dumps(doc["platform_json"]))
    print(f"replaying {path}: torch {doc['torch']}, cudnn {doc['cudnn']}, platform {platform!r}")
    rows = doc["rows"]
    changed = 0
    for r in rows:
        q = attnsel.Query.from_json(json.dumps(r["query"]))
        try:
            mine = attnsel.select(reg, q, platform).backend
        except attnsel.SelectionError as e:
            mine = f"error: {str(e).splitlines()[0]}"
        changed += mine != r["attnsel"]
        r.update(attnsel=mine, agree=mine == r["torch"])
    print(f"answers changed since the recording: {changed}")
    agree, ran = summarize(rows)
    if out:
        doc.update(agree=agree, ran=ran, rows=rows, replayed=True)
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


def sweep(dev, reg, platform, rows: list, start: int = 0) -> None:
    """Measures every grid call into rows, one by one, so an interrupted sweep keeps what it measured."""
    for dtype, (d, dv), mode, gqa, (sq, sk), b, extra in itertools.islice(grid(), start, None):
        h, hk = 8, (2 if gqa else 8)
        train = extra == "train"
        q = torch.randn(b, h, sq, d, device=dev, dtype=dtype, requires_grad=train)
        k = torch.randn(b, hk, sk, d, device=dev, dtype=dtype, requires_grad=train)
        v = torch.randn(b, hk, sk, dv, device=dev, dtype=dtype, requires_grad=train)
        mask = None
        if mode == "bool_mask":
            mask = torch.rand(b, 1, sq, sk, device=dev) > 0.2
            mask[..., 0] = True  # no fully masked row: every kernel then agrees on the output
        elif mode == "float_mask":
            mask = torch.randn(sq, sk, device=dev, dtype=dtype)
        dropout = 0.1 if mode == "dropout" else 0.0
        causal = mode == "causal"
        row = {"dtype": str(dtype).replace("torch.", ""), "head_dim": d, "head_dim_v": dv, "mode": mode, "gqa": gqa,
               "seq_q": sq, "seq_k": sk, "batch": b, "extra": extra}
        torch.use_deterministic_algorithms(extra == "deterministic")
        try:
            try:
                theirs = torch_name(torch._fused_sdp_choice(q, k, v, mask, dropout, causal, scale=None,
                                                            enable_gqa=gqa))
            except RuntimeError as e:
                theirs = f"error: {str(e).splitlines()[0]}"
            try:
                mine = at.select_sdpa(q, k, v, mask, dropout, causal, gqa, registry=reg, platform=platform)
            except attnsel.SelectionError as e:
                mine = e
            choice = getattr(mine, "backend", f"error: {str(mine).splitlines()[0]}")
            row.update(attnsel=choice, torch=theirs, agree=choice == theirs,
                       query=json.loads(attnsel.to_json(at.query_from_sdpa(q, k, v, mask, dropout, causal, gqa))))
            try:
                if isinstance(mine, Exception):
                    raise RuntimeError("attnsel chose nothing")
                with at.use_backend(mine):
                    torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout,
                                                                     is_causal=causal, enable_gqa=gqa)
                row["ran"] = True
            except RuntimeError as e:
                row["ran"] = False
                row["run_error"] = str(e).splitlines()[0][:200]
        finally:
            torch.use_deterministic_algorithms(False)
        rows.append(row)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--platform-from", choices=["detect", "torch"], default="detect")
    ap.add_argument("--start", type=int, default=0, help="skip the first N grid calls (resume a time-limited run)")
    ap.add_argument("--replay", metavar="FILE", help="ask today's catalog about a recorded sweep (no GPU)")
    args = ap.parse_args()
    if args.replay:
        return replay(args.replay, args.json)
    dev = torch.device(args.device)
    from_torch = at.platform(dev)
    detection = None
    if args.platform_from == "detect":
        detection = attnsel.detect_platform(device_index=dev.index or 0)
        platform = detection.platform
        print(detection)
    else:
        platform = from_torch
    reg = at.registry()
    # The first SDPA call is where PyTorch applies its cuDNN preference: make it before comparing.
    warm = torch.randn(1, 1, 8, 64, device=dev, dtype=torch.float16)
    torch._fused_sdp_choice(warm, warm, warm, None, 0.0, False)
    print(f"torch {torch.__version__}, cuda {torch.version.cuda}, cudnn {at.cudnn_version()}, "
          f"device {torch.cuda.get_device_name(dev)} capability {torch.cuda.get_device_capability(dev)}")
    print(f"attnsel {attnsel.__version__}, platform {platform!r} (from {args.platform_from})")
    # What the detected platform says beyond (or short of) what torch reports for the device.
    differ = sorted(set(platform.components.items()) ^ set(from_torch.components.items()))
    if detection:
        print(f"detected vs attnsel.torch.platform(): same arch {platform.arch == from_torch.arch}; "
              f"components in only one of them: {differ}")
    print(f"sdp priority order after first call: {torch._C._get_sdp_priority_order()}")

    rows = []
    # A time-limited run (tools/gpu_round.sh --quick) ends with SIGTERM: keep the rows measured so far.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        sweep(dev, reg, platform, rows, args.start)
    except KeyboardInterrupt:
        print(f"interrupted after {len(rows)} configurations: the summary covers those")
    agree, ran = summarize(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "cudnn": at.cudnn_version(), "platform": repr(platform),
                       "platform_json": json.loads(attnsel.to_json(platform)),
                       "platform_from": args.platform_from, "components_not_in_torch_platform": differ,
                       "facts": [vars(f) for f in detection.facts] if detection else [],
                       "configurations": len(rows), "agree": agree, "ran": ran, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
