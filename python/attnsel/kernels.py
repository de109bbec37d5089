# SPDX-License-Identifier: Apache-2.0
"""Attention kernels as callables, and the catalog entries of those outside SDPA's switches.

A kernel is any callable with the signature of ``F.scaled_dot_product_attention`` taken positionally,
``kernel(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa) -> Tensor`` (inputs and
output as batch, heads, length, dim). attnsel.tune times and checks kernels by backend name
(attnsel.tune.KernelRunner), and attnsel.torch.install(kernels=...) runs them where a registry selects
that name, so an engine's own kernels (FlashInfer's, a Triton one) are measured and routed like SDPA's.

Shipped here:

- ``sdpa(backend)``: SDPA with exactly one of torch's backends on (the catalog torch_sdpa's names);
- ``flex_attention()``: torch's FlexAttention, compiled by Inductor (Triton on CUDA);
- ``eager_attention()``: matmul, softmax in float32, matmul: transformers' eager attention, the floor;
- ``CATALOG`` / ``registry(base)``: catalog entries for FLEX_ATTENTION and EAGER. They are in no policy
  order, so a registry reaches them only through an override or a measured rule (attnsel.tune).
"""
from __future__ import annotations

import json
from typing import Callable, Dict, Optional

import torch

from . import Registry, parse_catalog

__all__ = ["CATALOG", "FAMILIES", "Kernel", "eager_attention", "flex_attention", "registry", "sdpa", "sdpa_kernels"]

Kernel = Callable[..., torch.Tensor]

#: The catalog (format 2) of the kernels outside SDPA's switches: backends only, in no policy's order.
CATALOG = {
    "format": "attnsel-catalog",
    "version": 2,
    "name": "torch_kernels",
    "description": "Attention kernels of torch outside SDPA's backend switches (attnsel.kernels): reached by "
                   "an override or a measured rule only",
    "source": "attnsel.kernels",
    "backends": [
        {
            "name": "FLEX_ATTENTION",
            "aliases": ["FLEX"],
            "description": "torch.nn.attention.flex_attention compiled by torch.compile (Inductor; Triton "
                           "kernels on CUDA sm80 and newer, C++ on the CPU), as attnsel.kernels."
                           "flex_attention runs it: a causal call gets a block mask of q_idx >= kv_idx (top "
                           "left, as SDPA's is_causal), grouped KV heads run with enable_gqa. No attn_mask, "
                           "dropout or grad here. Query and key head dims equal; the kernel rounds head "
                           "dims up to a power of two.",
            "domains": ["decoder", "encoder"],
            "attn_types": ["decoder", "encoder_only"],
            "dtypes": ["float16", "bfloat16", "float32"],
            "head_sizes": {"min": 16, "max": 256},
            "value_head_sizes": {"min": 16, "max": 256},
            "features": ["gqa"],
            "platforms": [{"vendor": "cuda", "min_capability": "8.0"}, {"vendor": "cpu"}],
        },
        {
            "name": "EAGER",
            "description": "Attention as separate torch operations (attnsel.kernels.eager_attention): query "
                           "times key, scaled, masked, softmax in float32, times value; grouped KV heads "
                           "repeated. transformers' eager attention: the floor every kernel should beat.",
            "domains": ["decoder", "encoder"],
            "attn_types": ["decoder", "encoder_only"],
            "dtypes": ["float16", "bfloat16", "float32"],
            "head_sizes": {"min": 1, "max": 1024},
            "value_head_sizes": {"min": 1, "max": 1024},
            "features": ["attn_mask", "gqa", "requires_grad"],
            "platforms": [{"vendor": "cuda"}, {"vendor": "cpu"}],
        },
    ],
    "policies": [],
}

#: Families a tuning run may add beside SDPA's backends: name -> the catalog backend its kernel runs.
FAMILIES = {"flex": "FLEX_ATTENTION", "eager": "EAGER"}


def registry(base: Optional[Registry] = None) -> Registry:
    """`base` (default: the installed torch's SDPA catalog, attnsel.torch.registry()) with CATALOG's backends
    layered on; `base` is not changed."""
    from . import torch as at

    out = at.registry().copy() if base is None else base.copy()
    out.merge(parse_catalog(json.dumps(CATALOG), "attnsel.kernels.CATALOG"))
    return out


def sdpa(backend: str) -> Kernel:
    """SDPA with exactly `backend` on (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH), the
    switches written directly and restored, as attnsel.torch's routed calls run it."""
    from . import torch as at

    at.to_sdp_backend(backend)  # ValueError naming the backends

    def run(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        return at._run_only(backend, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)

    run.__name__ = f"sdpa_{backend.lower()}"
    return run


def sdpa_kernels() -> Dict[str, Kernel]:
    """Every SDPA backend's kernel by its torch_sdpa name."""
    return {b: sdpa(b) for b in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")}


def _no_extras(name: str, attn_mask, dropout_p) -> None:
    if attn_mask is not None:
        raise ValueError(f"{name}: this kernel takes no attn_mask (the catalog does not state the feature)")
    if dropout_p:
        raise ValueError(f"{name}: this kernel takes no dropout")


# FlexAttention compiles with torch.compile's automatic dynamic shapes: the first shape specialises, the
# second recompiles with symbolic sizes, and later ones reuse that (a decode step's growing KV length
# does not compile again). Guards on the block mask and the flags add a few more; dynamo's default of 8
# compilations per function would then fall back to the unfused reference.
_FLEX_RECOMPILE_LIMIT = 64


def flex_attention(compiled: bool = True) -> Kernel:
    """FlexAttention as a kernel. `compiled` (the default; without it FlexAttention runs an unfused
    reference) wraps it in torch.compile once, with automatic dynamic shapes, and raises dynamo's
    recompile limit to 64 where it is lower. Causal block masks are built once per (query length, key
    length, device) and kept."""
    from torch.nn.attention.flex_attention import create_block_mask
    from torch.nn.attention.flex_attention import flex_attention as flex

    run_flex = flex
    if compiled:
        cfg = torch._dynamo.config
        for knob in ("recompile_limit", "cache_size_limit"):
            if getattr(cfg, knob, _FLEX_RECOMPILE_LIMIT) < _FLEX_RECOMPILE_LIMIT:
                setattr(cfg, knob, _FLEX_RECOMPILE_LIMIT)
        run_flex = torch.compile(flex)
    masks: Dict[tuple, object] = {}

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    def run(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        _no_extras("FLEX_ATTENTION", attn_mask, dropout_p)
        block = None
        if is_causal:
            where = (query.size(-2), key.size(-2), query.device)
            block = masks.get(where)
            if block is None:
                block = masks[where] = create_block_mask(causal, None, None, where[0], where[1], device=query.device)
        return run_flex(query, key, value, block_mask=block, scale=scale, enable_gqa=enable_gqa)

    run.__name__ = "flex_attention"
    return run


def eager_attention() -> Kernel:
    """Attention as separate operations, as transformers' eager implementation computes it: the scores
    in the inputs' dtype, softmax in float32 cast back, grouped KV heads repeated. A boolean attn_mask
    keeps where True; another is added to the scores."""

    def run(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        if dropout_p:
            raise ValueError("EAGER: this kernel takes no dropout")
        if enable_gqa and key.size(-3) != query.size(-3):
            group = query.size(-3) // key.size(-3)
            key, value = key.repeat_interleave(group, dim=-3), value.repeat_interleave(group, dim=-3)
        s = query.size(-1) ** -0.5 if scale is None else scale
        scores = torch.matmul(query, key.transpose(-2, -1)) * s
        if is_causal:
            n, m = scores.size(-2), scores.size(-1)
            keep = torch.ones(n, m, dtype=torch.bool, device=scores.device).tril()
            scores = scores.masked_fill(~keep, float("-inf"))
        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                scores = scores.masked_fill(~attn_mask, float("-inf"))
            else:
                scores = scores + attn_mask
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
        return torch.matmul(weights, value)

    run.__name__ = "eager_attention"
    return run
