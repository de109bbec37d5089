# SPDX-License-Identifier: Apache-2.0
"""What attnsel.tune measures: the attention layer (Workload), its shape classes and the ranges of calls
each class's rule covers, the presets, and the torch_sdpa Query of a class's call."""
from __future__ import annotations

import dataclasses
import math
from typing import Iterable, List, Optional, Sequence, Tuple

import attnsel

SEQ_LIMIT = 1 << 30  # attnsel's limit on a sequence length (limits::seq_len)
BATCH_LIMIT = 1 << 24  # and on a batch (limits::batch_size)

# Output tolerance against the float32 reference, per dtype: (absolute, relative).
TOLERANCE = {"float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2), "float32": (2e-3, 2e-3)}


@dataclasses.dataclass(frozen=True)
class ShapeClass:
    """One measured call and the range of calls its rule covers (inclusive bounds, None: unbounded)."""

    name: str
    kind: str  # prefill, decode or encoder
    batch: int
    seq_q: int
    seq_kv: int
    causal: bool
    seq_q_range: Tuple[int, int]
    seq_kv_range: Optional[Tuple[int, int]] = None
    batch_range: Optional[Tuple[int, int]] = None


@dataclasses.dataclass(frozen=True)
class Workload:
    """The attention layer being tuned and its shape classes."""

    name: str
    num_heads: int
    num_kv_heads: int
    head_size: int
    head_size_v: int
    dtype: str
    classes: Tuple[ShapeClass, ...]

    @property
    def gqa_group(self) -> int:
        return self.num_heads // self.num_kv_heads


def split_ranges(points: Sequence[int], low: int, high: int) -> List[Tuple[int, int]]:
    """Adjacent inclusive ranges covering [low, high], one per sorted point, split at geometric midpoints."""
    pts = sorted(set(points))
    if not pts:
        return []
    if pts[0] < low or pts[-1] > high:
        raise ValueError(f"points {pts} fall outside [{low}, {high}]")
    out = []
    lo = low
    for a, b in zip(pts, pts[1:]):
        cut = max(a, min(b - 1, int(math.floor(math.sqrt(a * b)))))
        out.append((lo, cut))
        lo = cut + 1
    out.append((lo, high))
    return out


def _positive(name: str, values: Iterable[int], limit: int) -> List[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v > limit:
            raise ValueError(f"{name}: {v!r} is not an integer in [1, {limit}]")
        out.append(v)
    if not out:
        raise ValueError(f"{name}: give at least one value")
    return out


def decoder_classes(prefill: Sequence[int], decode_batches: Sequence[int], decode_kv: Sequence[int]) -> Tuple[ShapeClass, ...]:
    """Causal prefill of each length (batch 1, query = key length) and decode (one query token) of each
    batch x KV length. A prefill class covers query lengths from 2 up (the decode classes take 1)."""
    prefill = _positive("prefill", prefill, SEQ_LIMIT) if prefill else []
    classes = []
    for n, (lo, hi) in zip(sorted(set(prefill)), split_ranges([max(p, 2) for p in sorted(set(prefill))], 2, SEQ_LIMIT)):
        if n < 2:
            raise ValueError("prefill: a length of 1 is a decode call; give lengths of 2 or more")
        classes.append(ShapeClass(f"prefill {n}", "prefill", 1, n, n, True, (lo, hi)))
    if decode_batches or decode_kv:
        batches = _positive("decode batch", decode_batches, BATCH_LIMIT)
        kvs = _positive("decode KV length", decode_kv, SEQ_LIMIT)
        for b, br in zip(sorted(set(batches)), split_ranges(batches, 1, BATCH_LIMIT)):
            for kv, kr in zip(sorted(set(kvs)), split_ranges(kvs, 1, SEQ_LIMIT)):
                classes.append(ShapeClass(f"decode b{b} kv{kv}", "decode", b, 1, kv, False, (1, 1), kr, br))
    return tuple(classes)


def encoder_classes(tokens: Sequence[int], batch: int = 1) -> Tuple[ShapeClass, ...]:
    """Non-causal self-attention over each token count (a vision encoder). A class covers token counts from
    2 up: a one-token non-causal call is a decode call (the decode classes take it)."""
    toks = _positive("tokens", tokens, SEQ_LIMIT)
    if min(toks) < 2:
        raise ValueError("tokens: a count of 1 is a decode call; give counts of 2 or more")
    return tuple(ShapeClass(f"encoder {n}", "encoder", batch, n, n, False, r)
                 for n, r in zip(sorted(set(toks)), split_ranges(toks, 2, SEQ_LIMIT)))


def preset(name: str) -> List[Workload]:
    """Named workloads: llama3-8b (decoder), decoders (Llama-3-8B with a d64 and a d256 decoder, so that a
    measured rule spans head sizes 64 to 256), vit (two vision encoders, bf16 d64 and fp16 d80), both with
    'llm+vit', and heldout (six other models' layers, to check an overlay on shapes it was not tuned on)."""
    llama = decoder_classes([128, 512, 2048, 8192, 16384], [1, 8, 64, 256], [1024, 4096, 32768])
    if name == "llama3-8b":
        return [Workload("llama3-8b", 32, 8, 128, 128, "bfloat16", llama)]
    if name == "decoders":
        # The other head sizes take Llama's prefill classes and its decode at batch 8 and 64 over up to
        # 4k keys (the same classes, so each rule can span the three head sizes where they agree).
        some = tuple(c for c in llama if c.kind == "prefill" or (c.batch in (8, 64) and c.seq_kv <= 4096))
        return preset("llama3-8b") + [Workload("opt-1.3b", 32, 32, 64, 64, "bfloat16", some),
                                      Workload("gemma3-4b", 8, 4, 256, 256, "bfloat16", some)]
    if name == "vit":
        return [Workload("vit-d64", 16, 16, 64, 64, "bfloat16", encoder_classes([256, 576, 1024, 4096], batch=8)),
                Workload("vit-d80", 16, 16, 80, 80, "float16", encoder_classes([256, 576, 1024, 4096], batch=4))]
    if name == "llm+vit":
        return preset("decoders") + preset("vit")
    if name == "heldout":  # other models' layers, never tuned on: a rule may reach them and must not slow them
        decoder = decoder_classes([512, 4096], [8, 64], [2048])
        return [Workload("qwen2.5-7b", 28, 4, 128, 128, "bfloat16", decoder),
                Workload("llama3-70b-tp8", 8, 1, 128, 128, "bfloat16", decoder),
                Workload("gemma2-9b", 16, 8, 256, 256, "bfloat16", decoder),
                Workload("phi3-mini", 32, 32, 96, 96, "bfloat16", decoder),
                Workload("siglip-so400m", 16, 16, 72, 72, "bfloat16", encoder_classes([729], batch=8)),
                Workload("whisper-large-enc", 20, 20, 64, 64, "float16", encoder_classes([1500], batch=4))]
    raise ValueError(f"preset: '{name}' is not one of llama3-8b, decoders, vit, llm+vit, heldout")


def query_of(w: Workload, c: ShapeClass) -> attnsel.Query:
    """The Query attnsel.torch.query_from_sdpa makes of the class's call (no torch needed)."""
    features = ["gqa"] if w.num_kv_heads != w.num_heads else []
    return attnsel.Query(head_size=w.head_size, head_size_v=w.head_size_v if w.head_size_v != w.head_size else None,
                         dtype=w.dtype, attn_type="decoder" if c.causal else "encoder_only", features=features,
                         batch_size=c.batch, num_heads=w.num_heads, num_kv_heads=w.num_kv_heads, seq_len_q=c.seq_q,
                         seq_len_kv=c.seq_kv)
