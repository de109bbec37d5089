# SPDX-License-Identifier: Apache-2.0
"""What transformers' attention function for "attnsel" costs a call beside its "sdpa" one (CPU or CUDA).

One decode-shaped grouped call (batch 8, 8 query heads over 2 KV heads, one query token, 64 keys, d16:
tiny, so that the Python around the kernel shows), through attnsel.transformers.attention_forward,
through transformers' sdpa_attention_forward, and as a bare F.scaled_dot_product_attention. Each figure
is the median of 7 rounds of 3,000 calls (the three interleaved), in microseconds a call, after 300
warm-up calls each; on the CPU with one thread.

    PYTHONPATH=build/dev/python python bench/attention_function_cost.py [--device cuda]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from transformers.integrations import sdpa_attention

import attnsel.transformers as atf


class _Layer(torch.nn.Module):
    num_key_value_groups = 4
    is_causal = True


def per_call_us(fns, device: str, calls: int = 3000, rounds: int = 7):
    """The median microseconds a call of each function, the rounds interleaved so drift reaches each alike."""
    for fn in fns.values():
        for _ in range(300):
            fn()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            if device == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if device == "cuda":
                torch.cuda.synchronize()
            times[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    dtype = torch.bfloat16 if a.device == "cuda" else torch.float32
    torch.set_num_threads(1)  # on the CPU, one thread: the pool's wake-ups would be the noise
    layer = _Layer()
    q = torch.randn(8, 8, 1, 16, device=a.device, dtype=dtype)
    k = torch.randn(8, 2, 64, 16, device=a.device, dtype=dtype)
    v = torch.randn(8, 2, 64, 16, device=a.device, dtype=dtype)
    with torch.no_grad():
        rows = {
            "attnsel.transformers.attention_forward": lambda: atf.attention_forward(layer, q, k, v, None, 0.0, None, None),
            "transformers sdpa_attention_forward": lambda: sdpa_attention.sdpa_attention_forward(
                layer, q, k, v, None, 0.0, None, None),
            "F.scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        }
        for name, us in per_call_us(rows, a.device).items():
            print(f"{name:40s} {us:8.2f} us", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
