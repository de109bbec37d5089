#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Per-call cost of attnsel.select from Python (reference registry, successful selection), median of repetitions.
"""Usage: PYTHONPATH=<build>/python python3 bench/python_select.py [--reps 15] [--calls 20000] [--json FILE]

Each repetition times `calls` back-to-back calls with time.perf_counter_ns and divides; the figure is
the median over repetitions (min and max are printed too). With --torch on a CUDA machine it also
times torch._fused_sdp_choice and attnsel.torch.select_sdpa the same way on the same SDPA inputs, and
then the two alternately, repetition by repetition, for a ratio a shared host's drift cannot skew.
"""
import argparse
import json
import statistics
import sys
import time

import attnsel


def per_call_ns(fn, calls: int, reps: int):
    for _ in range(max(1, calls // 10)):  # warm-up
        fn()
    samples = []
    for _ in range(reps):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - start) / calls)
    return {"median_ns": statistics.median(samples), "min_ns": min(samples), "max_ns": max(samples),
            "reps": reps, "calls": calls}


def attnsel_cases():
    reg = attnsel.reference_registry()
    hopper = attnsel.Platform.cuda(9, 0)
    mi300 = attnsel.Platform.rocm("gfx942", components=["aiter"])
    q = attnsel.Query()
    sinks = attnsel.Query(head_size=64, features={"sinks"})
    assert attnsel.select(reg, q, hopper).backend == "FLASH_ATTN"
    sdpa = attnsel.torch_sdpa_registry()
    bad = attnsel.Query(dtype="float32")
    grad = {"requires_grad"}
    bound_hopper, bound_mi300 = attnsel.Selector(reg, hopper), attnsel.Selector(reg, mi300)
    return {
        "select cuda 9.0 (FLASH_ATTN, rank 1)": lambda: attnsel.select(reg, q, hopper),
        "select rocm gfx942 sinks (3rd candidate)": lambda: attnsel.select(reg, sinks, mi300),
        "select with override 'TRITON_ATTN'": lambda: attnsel.select(reg, q, hopper, "TRITON_ATTN"),
        "Selector.select cuda 9.0 (cache hit)": lambda: bound_hopper.select(q),
        "Selector.select rocm gfx942 sinks (cache hit)": lambda: bound_mi300.select(sinks),
        "Selector.select, an equal Query built afresh (cache hit)": lambda: bound_hopper.select(attnsel.Query(
            head_size=64, dtype="bfloat16", num_heads=16, num_kv_heads=4, features={"sinks"})),
        "select failing, raise_on_error=False": lambda: attnsel.select(reg, bad, hopper, "FLASH_ATTN",
                                                                       raise_on_error=False),
        # select_sdpa's work after reading the tensors: a keyword Query, then select on torch_sdpa.
        "Query(head_size=, head_size_v=, dtype=, num_heads=, features=)": lambda: attnsel.Query(
            head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad),
        "select_sdpa-like: Query(...) + select(torch_sdpa)": lambda: attnsel.select(
            sdpa, attnsel.Query(head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad), hopper),
        "baseline: empty Python call": lambda: None,
    }


def torch_cases():
    import torch

    import attnsel.torch as at

    dev = "cuda"
    q = torch.randn(4, 16, 512, 128, device=dev, dtype=torch.bfloat16)
    k = torch.randn(4, 16, 512, 128, device=dev, dtype=torch.bfloat16)
    v = torch.randn(4, 16, 512, 128, device=dev, dtype=torch.bfloat16)
    reg = at.registry()
    plat = at.platform(dev)
    query = at.query_from_sdpa(q, k, v, is_causal=True)
    bound = attnsel.Selector(reg, plat)
    return {
        "torch._fused_sdp_choice (bf16 causal d128)": lambda: torch._fused_sdp_choice(q, k, v, None, 0.0, True),
        "attnsel.select on a prebuilt torch_sdpa Query": lambda: attnsel.select(reg, query, plat),
        "attnsel.Selector.select on a prebuilt torch_sdpa Query": lambda: bound.select(query),
        "attnsel.torch.query_from_sdpa + select": lambda: attnsel.select(
            reg, at.query_from_sdpa(q, k, v, is_causal=True), plat),
        "attnsel.torch.select_sdpa (everything)": lambda: at.select_sdpa(q, k, v, is_causal=True),
        "attnsel.torch.select_sdpa, the Python call key": lambda: python_keyed(at, q, k, v),
        # What a select_sdpa hit spends, part by part (its key reads these).
        "part: q.shape": lambda: q.shape,
        "part: q.dtype": lambda: q.dtype,
        "part: q.requires_grad": lambda: q.requires_grad,
        "part: q.is_nested": lambda: q.is_nested,
        "part: q.device": lambda: q.device,
        "part: q.get_device()": lambda: q.get_device(),
        "part: q.is_cuda": lambda: q.is_cuda,
        "part: torch.is_grad_enabled()": torch.is_grad_enabled,
        "part: torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled,
        "part: torch._C._get_deterministic_algorithms()": torch._C._get_deterministic_algorithms,
        "part: attrgetter of a tensor's 4 key attributes": lambda: at._tensor_key(q),
        **({"part: attnsel._torch_call.call_key (C++)": lambda: at._call_key(q, k, v, None, 0.0, True, False)}
           if at.CALL_KEY_NATIVE else {}),
    }


def python_keyed(at, q, k, v):
    """select_sdpa with its call key read through Python attributes (as where attnsel._torch_call is absent)."""
    native, at._call_key = at._call_key, None
    try:
        return at.select_sdpa(q, k, v, is_causal=True)
    finally:
        at._call_key = native


def paired(a, b, calls: int, reps: int):
    """a and b timed alternately, `calls` each per repetition: the median of the per-repetition ratios
    a / b, so that a shared host's drift moves both sides of each ratio together."""
    for _ in range(max(1, calls // 10)):
        a()
        b()
    ratios = []
    for _ in range(reps):
        times = []
        for fn in (a, b):
            start = time.perf_counter_ns()
            for _ in range(calls):
                fn()
            times.append(time.perf_counter_ns() - start)
        ratios.append(times[0] / times[1])
    return {"median_ratio": statistics.median(ratios), "min_ratio": min(ratios), "max_ratio": max(ratios),
            "reps": reps, "calls": calls}


def torch_pairs():
    import torch

    import attnsel.torch as at

    q, k, v = (torch.randn(4, 16, 512, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    bound = attnsel.Selector(at.registry(), at.platform("cuda"))
    query = at.query_from_sdpa(q, k, v, is_causal=True)
    choice = lambda: torch._fused_sdp_choice(q, k, v, None, 0.0, True)  # noqa: E731
    sdpa = lambda: at.select_sdpa(q, k, v, is_causal=True)  # noqa: E731
    pairs = {"torch._fused_sdp_choice / attnsel.torch.select_sdpa": (choice, sdpa),
             "torch._fused_sdp_choice / attnsel.Selector.select (prebuilt Query)": (choice, lambda: bound.select(query))}
    return pairs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--torch", action="store_true", help="also time torch._fused_sdp_choice (needs CUDA)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    cases = attnsel_cases()
    if args.torch:
        cases.update(torch_cases())
        import attnsel.torch as at
        print(f"select_sdpa's call key: {'C++ (attnsel._torch_call)' if at.CALL_KEY_NATIVE else 'Python'}"
              + ("" if at.CALL_KEY_NATIVE else f" ({at._call_key_missing})"))
    results = {}
    for name, fn in cases.items():
        results[name] = per_call_ns(fn, args.calls, args.reps)
        r = results[name]
        print(f"{name:48s} median {r['median_ns']:8.1f} ns  (min {r['min_ns']:.1f}, max {r['max_ns']:.1f})")
    ratios = {}
    if args.torch:
        for name, (a, b) in torch_pairs().items():
            ratios[name] = r = paired(a, b, args.calls, args.reps)
            print(f"{name}: median {r['median_ratio']:.2f}x  (min {r['min_ratio']:.2f}, max {r['max_ratio']:.2f}; "
                  f"alternating, {r['reps']} x {r['calls']} calls each)")
    torch_name = "torch._fused_sdp_choice (bf16 causal d128)"
    if torch_name in results:
        # One table, every figure from this process: what each call costs beside torch's own choice.
        base = results[torch_name]["median_ns"]
        print(f"\n| call | median ns | min-max ns | {torch_name.split(' ')[0]} / this |\n|---|---:|---:|---:|")
        for name, r in results.items():
            if name.startswith("part:"):
                continue
            print(f"| {name} | {r['median_ns']:.0f} | {r['min_ns']:.0f}-{r['max_ns']:.0f} | "
                  f"{base / r['median_ns']:.2f}x |")
        for name, r in ratios.items():
            print(f"| alternating: {name} | | | {r['median_ratio']:.2f}x ({r['min_ratio']:.2f}-{r['max_ratio']:.2f}) |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": sys.version, "attnsel": attnsel.__version__, "results": results, "ratios": ratios},
                      f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
