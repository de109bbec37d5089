# SPDX-License-Identifier: Apache-2.0
"""attnsel.tune: choose the SDPA backend by measured speed on this GPU, and keep the measurements as data.

    python -m attnsel.tune --preset llama3-8b --out measured.json --report report.md --budget 300

For each shape class of a workload (prefill lengths, decode batch x KV length, encoder token counts)
it runs every backend the torch_sdpa catalog supports for that call, each forced with
attnsel.torch.use_backend: warm-up, CUDA-event timing, the median over repetitions and its spread. The
outputs are checked against a float32 reference, so a fast wrong kernel is excluded and reported, never
chosen. The result is a catalog overlay (format 2): one policy rule per class whose order is the
measured ranking, with the raw timings and the machine's fingerprint (device name and exact torch and
cuDNN versions). Loaded with `--catalog FILE` (CLI) or Registry.merge (Python), it picks the fastest
backend on that machine; on any other device or version its rules do not match, and explain lists
them as stale with what differs.

The measuring is behind a small runner interface (TorchRunner on a GPU), so the planning, ranking,
overlay writing and report are tested with fake timings on any machine.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import shlex
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import attnsel
from attnsel.engines import MAX_JSON_DEPTH, _bounded_json

SEQ_LIMIT = 1 << 30  # attnsel's limit on a sequence length (limits::seq_len)
BATCH_LIMIT = 1 << 24  # and on a batch (limits::batch_size)
# Features that change which kernels run or what they cost; a measured rule is for calls without them.
_CALL_FEATURES = ("dropout", "attn_mask", "attn_mask_3d", "attn_mask_grad", "requires_grad", "deterministic",
                  "nested")
# Components whose exact versions a measurement holds for (those the platform states).
FINGERPRINT_COMPONENTS = ("torch", "cudnn", "cuda_runtime", "cuda_driver")
# Components without a version that change torch_sdpa's default order: a measurement holds only where
# each is present or absent as it was (cudnn_preferred: torch puts cuDNN first; TORCH_CUDNN_SDPA_DEPRIORITIZED).
SWITCHES = ("cudnn_preferred",)
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


@dataclasses.dataclass
class Timing:
    backend: str
    median_us: float
    spread_pct: float
    reps: int


@dataclasses.dataclass(frozen=True)
class Method:
    """How tune measures and when a measurement may change the default order.

    Each backend of a class is timed in `rounds` rounds of `reps` samples, the backends interleaved (each
    round starts at the next backend), so drift of the clock or the device reaches every backend alike. A
    class whose winner or default spreads more than `spread_limit_pct` (p90 - p10 over the median) is
    measured again, at most `retries` times, then keeps the default. A winner other than the default must
    beat it by more than the margin (the larger of `min_gain_pct` and the two backends' spreads) in the
    first pass and again in a second pass of `confirm_rounds` rounds over the two, run after every class's
    first pass."""

    rounds: int = 5
    reps: int = 4
    spread_limit_pct: float = 10.0
    retries: int = 2
    min_gain_pct: float = 3.0
    confirm_rounds: int = 8


@dataclasses.dataclass
class Decision:
    """Whether a class's measured rule may put another backend before the default, and the evidence."""

    winner: Optional[str]  # the backend the rule puts first; None: the default is kept and no rule is written
    why: str
    confirm: List[Timing] = dataclasses.field(default_factory=list)  # the second pass: winner and default


@dataclasses.dataclass
class ClassResult:
    """What was measured for one class."""

    shape: ShapeClass
    torch_default: str  # torch._fused_sdp_choice's backend for the call
    timings: List[Timing]  # passing backends, fastest first (sorted here, whatever order they came in)
    excluded: Dict[str, str]  # backend -> why (wrong output, failed to run)
    unsupported: Dict[str, str]  # backend -> the catalog's reason
    default: str = ""  # what the catalog answers for the call without a measured rule
    order: List[str] = dataclasses.field(default_factory=list)  # the catalog's candidate order for the call
    attempts: int = 1  # first-pass measurements made (more than one when the spread was over the limit)
    decision: Optional[Decision] = None  # None: not decided (a recorded file without a second pass)

    def __post_init__(self) -> None:
        # The ranking is the order of the times: a caller (from_json, a test) may list them in any order.
        self.timings = sorted(self.timings, key=lambda t: t.median_us)
        if not self.default:
            self.default = self.torch_default

    @property
    def fastest(self) -> Optional[Timing]:
        return self.timings[0] if self.timings else None

    def time_of(self, backend: str) -> Optional[Timing]:
        return next((t for t in self.timings if t.backend == backend), None)


@dataclasses.dataclass
class TuneResult:
    workload: Workload
    platform: attnsel.Platform
    results: List[ClassResult]
    skipped: List[Tuple[str, str]]  # (class name, why): not measured
    seconds: Optional[float]  # measuring time; None when not recorded
    date: str = dataclasses.field(default_factory=lambda: datetime.date.today().isoformat())
    # Facts of the machine no rule checks, recorded for a reviewer: {"attnsel": "0.3.0", "driver": "13.0"}.
    machine: Dict[str, str] = dataclasses.field(default_factory=lambda: {"attnsel": attnsel.__version__})


MEASUREMENTS_FORMAT = "attnsel-tune-measurements"


def to_json(results: Sequence[TuneResult]) -> dict:
    """Every measurement, replayable with from_json (`--from-json`): overlay and report are rewritten
    from it without a GPU."""
    if not results:
        raise ValueError("to_json: nothing was measured")
    return {
        "format": MEASUREMENTS_FORMAT, "version": 2, "date": results[0].date, "machine": results[0].machine,
        "platform": json.loads(attnsel.to_json(results[0].platform)),
        "workloads": [{**{k: v for k, v in dataclasses.asdict(t.workload).items()},
                       "results": [dataclasses.asdict(r) for r in t.results],
                       "skipped": [list(s) for s in t.skipped], "seconds": t.seconds} for t in results],
    }


class MeasurementError(ValueError):
    """A measurements document (or a measured result) that no overlay may be written from; the message
    starts with the JSON pointer of the field at fault."""


_LIMITS = {"batch": BATCH_LIMIT, "seq_q": SEQ_LIMIT, "seq_kv": SEQ_LIMIT}
_RANGE_LIMITS = {"seq_q_range": SEQ_LIMIT, "seq_kv_range": SEQ_LIMIT, "batch_range": BATCH_LIMIT}


class _Reader:
    """Reads one document field by field; every refusal names the field's JSON pointer."""

    @staticmethod
    def fail(ptr: str, problem: str) -> "None":
        raise MeasurementError(f"{ptr or '/'}: {problem}")

    def obj(self, v: object, ptr: str, required: Sequence[str]) -> dict:
        if not isinstance(v, dict):
            self.fail(ptr, f"expected an object, got {v!r:.60}")
        for k in required:
            if k not in v:
                self.fail(f"{ptr}/{k}", "missing")
        return v

    def lst(self, v: object, ptr: str) -> list:
        if not isinstance(v, list):
            self.fail(ptr, f"expected an array, got {v!r:.60}")
        return v

    def text(self, v: object, ptr: str) -> str:
        if not isinstance(v, str) or not v:
            self.fail(ptr, f"expected a non-empty string, got {v!r:.60}")
        return v

    def integer(self, v: object, ptr: str, lo: int, hi: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            self.fail(ptr, f"expected an integer in [{lo}, {hi}], got {v!r:.60}")
        return v

    def number(self, v: object, ptr: str, positive: bool) -> float:
        ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and (
            v > 0 if positive else v >= 0)
        if not ok:
            self.fail(ptr, f"expected a finite number {'> 0' if positive else '>= 0'}, got {v!r:.60}")
        return float(v)

    def span(self, v: object, ptr: str, limit: int, optional: bool) -> Optional[Tuple[int, int]]:
        if v is None and optional:
            return None
        pair = self.lst(v, ptr)
        if len(pair) != 2:
            self.fail(ptr, f"expected [min, max], got {v!r:.60}")
        lo = self.integer(pair[0], f"{ptr}/0", 1, limit)
        hi = self.integer(pair[1], f"{ptr}/1", 1, limit)
        if hi < lo:
            self.fail(ptr, f"the range [{lo}, {hi}] is empty (max < min)")
        return lo, hi

    def shape(self, d: object, ptr: str) -> ShapeClass:
        d = self.obj(d, ptr, ("name", "kind", "batch", "seq_q", "seq_kv", "causal", "seq_q_range"))
        if d["kind"] not in ("prefill", "decode", "encoder"):
            self.fail(f"{ptr}/kind", f"expected prefill, decode or encoder, got {d['kind']!r:.60}")
        if not isinstance(d["causal"], bool):
            self.fail(f"{ptr}/causal", f"expected true or false, got {d['causal']!r:.60}")
        sizes = {k: self.integer(d[k], f"{ptr}/{k}", 1, lim) for k, lim in _LIMITS.items()}
        spans = {k: self.span(d.get(k), f"{ptr}/{k}", lim, k != "seq_q_range") for k, lim in _RANGE_LIMITS.items()}
        return ShapeClass(self.text(d["name"], f"{ptr}/name"), d["kind"], sizes["batch"], sizes["seq_q"],
                          sizes["seq_kv"], d["causal"], spans["seq_q_range"], spans["seq_kv_range"],
                          spans["batch_range"])

    def reasons(self, v: object, ptr: str) -> Dict[str, str]:
        d = self.obj(v, ptr, ())
        for k, why in d.items():
            self.text(why, f"{ptr}/{k}")
        return dict(d)

    def timings(self, v: object, ptr: str, backends: Sequence[str]) -> List[Timing]:
        out: List[Timing] = []
        for i, t in enumerate(self.lst(v, ptr)):
            p = f"{ptr}/{i}"
            t = self.obj(t, p, ("backend", "median_us", "spread_pct", "reps"))
            name = self.text(t["backend"], f"{p}/backend")
            if name not in backends:
                self.fail(f"{p}/backend", f"{name!r:.60} is not a backend of torch_sdpa ({', '.join(backends)})")
            if any(seen.backend == name for seen in out):
                self.fail(f"{p}/backend", f"{name} is timed twice in one class")
            out.append(Timing(name, self.number(t["median_us"], f"{p}/median_us", True),
                              self.number(t["spread_pct"], f"{p}/spread_pct", False),
                              self.integer(t["reps"], f"{p}/reps", 1, 1 << 30)))
        return out

    def decision(self, v: object, ptr: str, backends: Sequence[str]) -> Optional[Decision]:
        if v is None:
            return None
        d = self.obj(v, ptr, ("winner", "why", "confirm"))
        winner = None if d["winner"] is None else self.text(d["winner"], f"{ptr}/winner")
        confirmed = self.timings(d["confirm"], f"{ptr}/confirm", backends)
        if winner is not None and winner not in [t.backend for t in confirmed]:
            self.fail(f"{ptr}/winner", f"{winner} has no timing in the second pass (confirm)")
        if winner is not None:
            won = next(t.median_us for t in confirmed if t.backend == winner)
            faster = [t.backend for t in confirmed if t.median_us < won]
            if faster:
                self.fail(f"{ptr}/winner", f"{winner} is slower than {faster[0]} in its own second pass")
        return Decision(winner, self.text(d["why"], f"{ptr}/why"), confirmed)

    def names(self, v: object, ptr: str, backends: Sequence[str]) -> List[str]:
        out = []
        for i, name in enumerate(self.lst(v, ptr)):
            if self.text(name, f"{ptr}/{i}") not in backends:
                self.fail(f"{ptr}/{i}", f"{name!r:.60} is not a backend of torch_sdpa ({', '.join(backends)})")
            out.append(name)
        return out

    def document(self, doc: object) -> List[TuneResult]:
        if not isinstance(doc, dict) or doc.get("format") != MEASUREMENTS_FORMAT or doc.get("version") not in (1, 2):
            raise MeasurementError(f"not an {MEASUREMENTS_FORMAT} document (version 1 or 2)")
        self.obj(doc, "", ("platform", "workloads", "date"))
        try:
            platform = attnsel.Platform.from_json(json.dumps(doc["platform"], allow_nan=False))
        except ValueError as e:
            self.fail("/platform", str(e))
        date = self.text(doc["date"], "/date")
        machine = self.reasons(doc.get("machine", {}), "/machine")
        backends = attnsel.torch_sdpa_registry().backends
        out = []
        for n, w in enumerate(self.lst(doc["workloads"], "/workloads")):
            wp = f"/workloads/{n}"
            w = self.obj(w, wp, ("name", "num_heads", "num_kv_heads", "head_size", "head_size_v", "dtype", "classes",
                                 "results", "skipped"))
            heads = self.integer(w["num_heads"], f"{wp}/num_heads", 1, 1 << 20)
            kv = self.integer(w["num_kv_heads"], f"{wp}/num_kv_heads", 1, heads)
            if heads % kv:
                self.fail(f"{wp}/num_kv_heads", f"{kv} does not divide num_heads {heads}")
            if not isinstance(w["dtype"], str) or w["dtype"] not in TOLERANCE:  # a list is unhashable
                self.fail(f"{wp}/dtype", f"expected one of {', '.join(TOLERANCE)}, got {w['dtype']!r:.60}")
            classes = tuple(self.shape(c, f"{wp}/classes/{i}") for i, c in enumerate(self.lst(w["classes"],
                                                                                                   f"{wp}/classes")))
            workload = Workload(self.text(w["name"], f"{wp}/name"), heads, kv,
                                self.integer(w["head_size"], f"{wp}/head_size", 1, 1 << 16),
                                self.integer(w["head_size_v"], f"{wp}/head_size_v", 1, 1 << 16), w["dtype"], classes)
            results = []
            for i, r in enumerate(self.lst(w["results"], f"{wp}/results")):
                rp = f"{wp}/results/{i}"
                r = self.obj(r, rp, ("shape", "torch_default", "timings", "excluded", "unsupported"))
                # Version 1 recorded one pass and no decision: such a class keeps the default.
                default = r.get("default") or r["torch_default"]
                results.append(ClassResult(self.shape(r["shape"], f"{rp}/shape"),
                                           self.text(r["torch_default"], f"{rp}/torch_default"),
                                           self.timings(r["timings"], f"{rp}/timings", backends),
                                           self.reasons(r["excluded"], f"{rp}/excluded"),
                                           self.reasons(r["unsupported"], f"{rp}/unsupported"),
                                           self.text(default, f"{rp}/default"),
                                           self.names(r.get("order", []), f"{rp}/order", backends),
                                           self.integer(r.get("attempts", 1), f"{rp}/attempts", 1, 1000),
                                           self.decision(r.get("decision"), f"{rp}/decision", backends)))
            skipped = []
            for i, sk in enumerate(self.lst(w["skipped"], f"{wp}/skipped")):
                pair = self.lst(sk, f"{wp}/skipped/{i}")
                if len(pair) != 2:
                    self.fail(f"{wp}/skipped/{i}", "expected [class name, why]")
                skipped.append((self.text(pair[0], f"{wp}/skipped/{i}/0"), self.text(pair[1], f"{wp}/skipped/{i}/1")))
            seconds = w.get("seconds")
            if seconds is not None:
                seconds = self.number(seconds, f"{wp}/seconds", False)
            out.append(TuneResult(workload, platform, results, skipped, seconds, date, machine))
        return out


def from_json(doc: dict) -> List[TuneResult]:
    """The TuneResults to_json wrote, every field checked (MeasurementError, a ValueError, names the
    field's JSON pointer): times finite and > 0, each backend a torch_sdpa backend timed once per class,
    ranges non-empty. The timings of each class are ranked by time, whatever their order in the file."""
    return _Reader().document(doc)


def read_measurements(data: Union[bytes, str]) -> List[TuneResult]:
    """The TuneResults of a measurements file's bytes (or text), as `--from-json` reads them. Raises only
    ValueError: MeasurementError for a document from_json refuses, for JSON nested deeper than
    MAX_JSON_DEPTH levels (json's recursion would raise RecursionError) and for text that is not JSON;
    UnicodeDecodeError for bytes that are not UTF-8."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    return from_json(_bounded_json(text, "/", MeasurementError))


def check_results(results: Sequence[TuneResult]) -> None:
    """MeasurementError unless `results` would replay through from_json (what tune measured is checked
    as a recorded document is, before anything is written)."""
    from_json(json.loads(json.dumps(to_json(results))))


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
    """Non-causal self-attention over each token count (a vision encoder)."""
    toks = _positive("tokens", tokens, SEQ_LIMIT)
    return tuple(ShapeClass(f"encoder {n}", "encoder", batch, n, n, False, r)
                 for n, r in zip(sorted(set(toks)), split_ranges(toks, 1, SEQ_LIMIT)))


def preset(name: str) -> List[Workload]:
    """Named workloads: llama3-8b (decoder), vit (two vision encoders), both with 'llm+vit', and heldout
    (six other models' layers, to check an overlay on shapes it was not tuned on)."""
    if name == "llama3-8b":
        return [Workload("llama3-8b", 32, 8, 128, 128, "bfloat16",
                         decoder_classes([128, 512, 2048, 8192, 16384], [1, 8, 64, 256], [1024, 4096, 32768]))]
    if name == "vit":
        return [Workload("vit-d64", 16, 16, 64, 64, "bfloat16", encoder_classes([256, 576, 1024, 4096], batch=8)),
                Workload("vit-d80", 16, 16, 80, 80, "bfloat16", encoder_classes([256, 1024, 4096], batch=4))]
    if name == "llm+vit":
        return preset("llama3-8b") + preset("vit")
    if name == "heldout":  # other models' layers, never tuned on: an overlay must leave them as they are
        decoder = decoder_classes([512, 4096], [8, 64], [2048])
        return [Workload("qwen2.5-7b", 28, 4, 128, 128, "bfloat16", decoder),
                Workload("llama3-70b-tp8", 8, 1, 128, 128, "bfloat16", decoder),
                Workload("gemma2-9b", 16, 8, 256, 256, "bfloat16", decoder),
                Workload("phi3-mini", 32, 32, 96, 96, "bfloat16", decoder),
                Workload("siglip-so400m", 16, 16, 72, 72, "bfloat16", encoder_classes([729], batch=8)),
                Workload("whisper-large-enc", 20, 20, 64, 64, "float16", encoder_classes([1500], batch=4))]
    raise ValueError(f"preset: '{name}' is not one of llama3-8b, vit, llm+vit, heldout")


def query_of(w: Workload, c: ShapeClass) -> attnsel.Query:
    """The Query attnsel.torch.query_from_sdpa makes of the class's call (no torch needed)."""
    features = ["gqa"] if w.num_kv_heads != w.num_heads else []
    return attnsel.Query(head_size=w.head_size, head_size_v=w.head_size_v if w.head_size_v != w.head_size else None,
                         dtype=w.dtype, attn_type="decoder" if c.causal else "encoder_only", features=features,
                         batch_size=c.batch, num_heads=w.num_heads, num_kv_heads=w.num_kv_heads, seq_len_q=c.seq_q,
                         seq_len_kv=c.seq_kv)


class Runner:
    """What tune needs from a machine. TorchRunner implements it on a GPU; tests fake it."""

    def torch_default(self, w: Workload, c: ShapeClass) -> str:
        raise NotImplementedError

    def time(self, w: Workload, c: ShapeClass, backend: str, reps: int) -> List[float]:
        """`reps` per-call times of the forced backend, microseconds."""
        raise NotImplementedError

    def check(self, w: Workload, c: ShapeClass, backend: str) -> Optional[str]:
        """None when the forced backend's output matches the reference, else why not."""
        raise NotImplementedError


def summarize(backend: str, samples: Sequence[float]) -> Timing:
    s = sorted(samples)
    med = statistics.median(s)
    p10 = s[int(0.1 * (len(s) - 1))]
    p90 = s[int(math.ceil(0.9 * (len(s) - 1)))]
    return Timing(backend, med, 100.0 * (p90 - p10) / med if med > 0 else 0.0, len(s))


def interleaved(w: Workload, c: ShapeClass, backends: Sequence[str], runner: Runner, rounds: int, reps: int,
                excluded: Dict[str, str]) -> List[Timing]:
    """Times `backends` in `rounds` rounds of `reps` samples each, round r starting at backend r (mod n);
    fastest first. A backend that fails while timed (out of memory, a kernel error) is dropped into
    `excluded`."""
    live = list(backends)
    samples: Dict[str, List[float]] = {b: [] for b in live}
    for r in range(rounds):
        if not live:
            break
        k = r % len(live)
        for b in live[k:] + live[:k]:
            try:
                samples[b].extend(runner.time(w, c, b, reps))
            except RuntimeError as e:
                excluded[b] = f"failed while timed: {str(e).splitlines()[0][:160]}"
                live.remove(b)
    return sorted((summarize(b, samples[b]) for b in live if samples[b]), key=lambda t: t.median_us)


def measure(w: Workload, c: ShapeClass, registry: attnsel.Registry, platform: attnsel.Platform,
            runner: Runner, method: Method = Method()) -> ClassResult:
    """The first pass over one class: every backend the catalog supports for it (forced, as use_backend
    runs it), plus torch's own choice, checked against a reference and timed interleaved, again while the
    winner's or the default's spread is over the limit (Method)."""
    q = query_of(w, c)
    supported, unsupported = [], {}
    candidates_seen = attnsel.explain(registry, q, platform).candidates
    for cand in candidates_seen:
        forced = attnsel.select(registry, q, platform, cand.name, raise_on_error=False)
        if isinstance(forced, attnsel.Selection):
            supported.append(cand.name)
        else:
            unsupported[cand.name] = str(forced).splitlines()[0]
    catalog = attnsel.select(registry, q, platform, raise_on_error=False)
    default_choice = catalog.backend if isinstance(catalog, attnsel.Selection) else ""
    torch_choice = runner.torch_default(w, c)
    excluded: Dict[str, str] = {}
    candidates = list(supported)
    if torch_choice not in supported:
        # torch's choice is timed only when it is a backend the catalog knows (a disagreement to report);
        # an error or a name outside the catalog is recorded, never forced.
        if torch_choice in registry:
            candidates.append(torch_choice)
        else:
            excluded[torch_choice] = "torch's choice is not a backend of the catalog; not timed"
    passing = []
    for b in candidates:
        why = runner.check(w, c, b)
        if why is None:
            passing.append(b)
        else:
            excluded[b] = why
    attempts, timings = 0, []
    while attempts <= method.retries:
        attempts += 1
        timings = interleaved(w, c, passing, runner, method.rounds, method.reps, excluded)
        passing = [t.backend for t in timings]
        watched = [t for t in timings if t.backend in (timings[0].backend, default_choice)] if timings else []
        if all(t.spread_pct <= method.spread_limit_pct for t in watched):
            break
    return ClassResult(c, torch_choice, timings, excluded, unsupported, default_choice or torch_choice,
                       [cand.name for cand in candidates_seen], attempts)


def _gain(winner: Timing, default: Timing, method: Method) -> Tuple[float, float]:
    """How much faster the winner is than the default, and the margin it must exceed, both in percent."""
    return (100.0 * (default.median_us / winner.median_us - 1.0),
            max(method.min_gain_pct, winner.spread_pct, default.spread_pct))


def first_verdict(r: ClassResult, method: Method) -> Decision:
    """After the first pass: a Decision that keeps the default (winner None), or one naming the candidate
    winner with why "to confirm" (a second pass decides)."""
    best, default = r.fastest, r.time_of(r.default)
    if best is None:
        return Decision(None, "no backend passed the check")
    if default is None:
        what = r.excluded.get(r.default, "not among the timed backends")
        return Decision(None, f"the default {r.default} has no timing ({what}): nothing to beat")
    noisy = [t for t in (best, default) if t.spread_pct > method.spread_limit_pct]
    if noisy:
        return Decision(None, "too noisy: " + ", ".join(f"{t.backend} spread {t.spread_pct:.1f}%" for t in noisy)
                        + f" over the {method.spread_limit_pct:g}% limit after {r.attempts} measurement(s)")
    if best.backend == r.default:
        return Decision(None, f"the default {r.default} is the fastest")
    gain, margin = _gain(best, default, method)
    if gain <= margin:
        return Decision(None, f"{best.backend} is {gain:.1f}% faster than the default {r.default}, "
                              f"within the {margin:.1f}% margin")
    return Decision(best.backend, f"to confirm: {best.backend} {gain:.1f}% faster than {r.default} "
                                  f"(margin {margin:.1f}%)")


def confirm(w: Workload, r: ClassResult, runner: Runner, method: Method) -> Decision:
    """The second, independent pass: the candidate winner and the default timed again, interleaved; the
    rule reorders only when the winner again beats the default by more than the margin."""
    first = first_verdict(r, method)
    if first.winner is None:
        return first
    pair = interleaved(w, r.shape, [first.winner, r.default], runner, method.confirm_rounds, method.reps, {})
    times = {t.backend: t for t in pair}
    if len(times) < 2:
        return Decision(None, f"second pass: {first.winner} or {r.default} failed while timed", pair)
    win, dflt = times[first.winner], times[r.default]
    gain1, _ = _gain(r.time_of(first.winner), r.time_of(r.default), method)
    gain, margin = _gain(win, dflt, method)
    said = (f"second pass {first.winner} {win.median_us:.1f} us vs {r.default} {dflt.median_us:.1f} us, "
            f"{gain:.1f}% faster (margin {margin:.1f}%)")
    if gain <= margin:
        return Decision(None, f"not confirmed: first pass {gain1:.1f}% faster, {said}", pair)
    return Decision(first.winner, f"confirmed: first pass {gain1:.1f}% faster, {said}", pair)


def tune(workloads: Sequence[Workload], registry: attnsel.Registry, platform: attnsel.Platform, runner: Runner,
         budget_s: float = 600.0, clock: Callable[[], float] = time.monotonic,
         progress: Optional[Callable[[int, int, str], None]] = None, method: Method = Method(),
         decide: bool = True) -> List[TuneResult]:
    """Measures every class of every workload until the budget is spent (the rest are listed as skipped),
    then decides each class (Method): a winner other than the default is timed again in a second pass
    after all first passes, so the two passes are apart in time. decide=False: the first pass only."""
    start = clock()
    total = sum(len(w.classes) for w in workloads)
    done = 0
    out = []
    for w in workloads:
        t0 = clock()
        results, skipped = [], []
        for c in w.classes:
            if clock() - start > budget_s:
                skipped.append((c.name, f"not measured: the {budget_s:g} s budget was spent"))
            else:
                if progress:
                    progress(done, total, f"{w.name} {c.name}")
                results.append(measure(w, c, registry, platform, runner, method))
            done += 1
        if progress:
            progress(done, total, w.name)
        out.append(TuneResult(w, platform, results, skipped, clock() - t0))
    for t in out if decide else ():
        for r in t.results:
            if first_verdict(r, method).winner is not None and clock() - start > budget_s:
                r.decision = Decision(None, f"no second pass: the {budget_s:g} s budget was spent")
            else:
                r.decision = confirm(t.workload, r, runner, method)
    return out


def check_platform(platform: attnsel.Platform) -> None:
    """ValueError unless measurements on `platform` can be fingerprinted: a CUDA device with a name (a
    measurement without a device name would hold on every device of the arch)."""
    if platform.vendor != "cuda" or platform.arch is None:
        raise ValueError(f"tune measures CUDA devices; platform {platform} is not one")
    if not platform.device_name:
        raise ValueError(f"platform {platform} states no device name: a measurement must name its device")


def fingerprint(platform: attnsel.Platform) -> Tuple[Optional[str], List[str]]:
    """The device name and the exact component versions a measurement on `platform` holds for."""
    comps = platform.components
    return platform.device_name, [f"{n}={comps[n]}" for n in FINGERPRINT_COMPONENTS if comps.get(n)]


def switches(platform: attnsel.Platform) -> Tuple[List[str], List[str]]:
    """The SWITCHES present on `platform` and those absent: a measured rule holds only where each is as
    it was (the default a rule was checked against is the order they give)."""
    comps = platform.components
    return [n for n in SWITCHES if n in comps], [n for n in SWITCHES if n not in comps]


def _range(lo_hi: Optional[Tuple[int, int]], limit: int) -> Optional[dict]:
    if lo_hi is None:
        return None
    lo, hi = lo_hi
    out = {"min": lo}
    if hi < limit:
        out["max"] = hi
    return out


def rule_of(r: ClassResult, w: Workload, platform: attnsel.Platform) -> dict:
    """The class's measured policy rule (catalog format 2), for a class whose decision reorders."""
    c = r.shape
    cap = platform.arch
    check_platform(platform)
    device, comps = fingerprint(platform)
    feats = sorted(query_of(w, c).features)  # the features the call states, as select sees them
    rule = {"domain": "decoder", "vendor": "cuda", "min_capability": cap, "max_capability": cap,
            "dtypes": [w.dtype], "head_sizes": [w.head_size], "min_num_heads": w.num_heads,
            "max_num_heads": w.num_heads}
    if feats:
        rule["features"] = feats
    rule["without_features"] = list(_CALL_FEATURES)
    rule["seq_len_q"] = _range(c.seq_q_range, SEQ_LIMIT)
    if c.seq_kv_range:
        rule["seq_len_kv"] = _range(c.seq_kv_range, SEQ_LIMIT)
    if c.batch_range:
        rule["batch_size"] = _range(c.batch_range, BATCH_LIMIT)
    rule["gqa_group"] = {"min": w.gqa_group, "max": w.gqa_group}
    d = r.decision
    if d is None or d.winner is None:
        raise ValueError(f"rule_of: {w.name} {c.name} keeps the default ({d.why if d else 'not decided'}): no rule")
    rule["note"] = (f"measured: {w.name} {c.name} ({'causal' if c.causal else 'non-causal'}, d{w.head_size}, "
                    f"{w.num_heads}/{w.num_kv_heads} heads); {d.winner} before the default {r.default}, {d.why}"
                    + (f"; excluded {', '.join(sorted(r.excluded))}" if r.excluded else ""))
    # The winner moves first; every other backend keeps the catalog's order. The times are the second
    # pass's, the evidence for the one change the rule makes.
    # A backend whose output was wrong for the class leaves the order.
    wrong = {b for b, why in r.excluded.items() if why.startswith("wrong output")}
    rule["order"] = [d.winner] + [b for b in (r.order or [t.backend for t in r.timings])
                                  if b != d.winner and b not in wrong]
    measured = {"times": [{"backend": t.backend, "median_us": round(t.median_us, 3),
                           "spread_pct": round(t.spread_pct, 2)} for t in sorted(d.confirm, key=lambda t: t.median_us)]}
    if device:
        measured["device"] = device
    if comps:
        measured["components"] = comps
    on, off = switches(platform)
    if on:
        measured["present"] = on
    if off:
        measured["absent"] = off
    rule["measured"] = measured
    return rule


def overlay(results: Sequence[TuneResult], name: str = "measured", command: str = "") -> dict:
    """The catalog overlay: one measured rule per class whose winner was confirmed (Decision); every other
    class keeps the catalog's order and has no rule. Facts of the machine that no rule checks (the driver,
    attnsel's version) are recorded in the description."""
    if not results:
        raise ValueError("overlay: nothing was measured")
    platform = results[0].platform
    device, comps = fingerprint(platform)
    on, _ = switches(platform)
    comps = comps + [f"cuDNN {'preferred' if 'cudnn_preferred' in on else 'deprioritized'}"]
    rules = [rule_of(r, t.workload, platform) for t in results for r in t.results
             if r.decision is not None and r.decision.winner is not None]
    extra = "; ".join(f"{k} {v}" for k, v in sorted(results[0].machine.items()))
    return {
        "format": "attnsel-catalog",
        "version": 2,
        "name": name,
        "description": (f"SDPA backends measured on {device or 'an unnamed device'} "
                        f"(cuda {platform.arch}; {', '.join(comps) or 'no component versions'}"
                        f"{'; ' + extra if extra else ''}) on {results[0].date}: each rule moves first a backend "
                        "that beat the default in two passes; layer it on torch_sdpa"),
        "source": command or "python -m attnsel.tune",
        "backends": [],
        "policies": rules,
    }


def regret_rows(results: Sequence[TuneResult], tuned: Callable[[Workload, ShapeClass], str]) -> List[dict]:
    """Per class: torch's default, the tuned choice (as selecting with the overlay answers), the fastest,
    each with its time and its regret against the fastest."""
    rows = []
    for t in results:
        for r in t.results:
            best = r.fastest
            if best is None:
                continue
            mine = tuned(t.workload, r.shape)
            td, tt = r.time_of(r.torch_default), r.time_of(mine)
            rows.append({
                "workload": t.workload.name, "class": r.shape.name, "fastest": best.backend,
                "fastest_us": best.median_us, "spread_pct": best.spread_pct,
                "torch_default": r.torch_default, "torch_us": td.median_us if td else None,
                "tuned": mine, "tuned_us": tt.median_us if tt else None,
                "torch_regret": td.median_us / best.median_us if td else None,
                "tuned_regret": tt.median_us / best.median_us if tt else None,
                "tuned_vs_torch": tt.median_us / td.median_us if tt and td else None,
                "decision": r.decision.why if r.decision else "not decided (no second pass recorded)",
                "excluded": r.excluded,
            })
    return rows


def geomean(values: Sequence[float]) -> Optional[float]:
    vals = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def report(results: Sequence[TuneResult], rows: Sequence[dict], command: str = "") -> str:
    """A Markdown report: the fingerprint, a table of classes with the three times (first pass), the
    geomeans, the worst tuned time over torch default's, the classes the overlay moves and why, the classes
    that kept the default and why, and what was excluded or skipped."""
    platform = results[0].platform
    device, comps = fingerprint(platform)
    lines = [f"Measured on {device or 'an unnamed device'} (cuda {platform.arch}; {', '.join(comps)}), "
             f"{results[0].date}.", ""]
    if command:
        lines += ["```", command, "```", ""]
    lines += ["| workload | class | torch default | us | tuned | us | fastest | us | spread | torch regret | tuned regret |",
              "|---|---|---|---:|---|---:|---|---:|---:|---:|---:|"]

    def us(v):
        return f"{v:.1f}" if v is not None else "-"

    def x(v):
        return f"{v:.3f}x" if v is not None else "-"

    for r in rows:
        lines.append(f"| {r['workload']} | {r['class']} | {r['torch_default']} | {us(r['torch_us'])} | {r['tuned']} | "
                     f"{us(r['tuned_us'])} | {r['fastest']} | {us(r['fastest_us'])} | {r['spread_pct']:.1f}% | "
                     f"{x(r['torch_regret'])} | {x(r['tuned_regret'])} |")
    gt, gu = geomean([r["torch_regret"] for r in rows]), geomean([r["tuned_regret"] for r in rows])
    lines += ["", f"Geometric-mean regret against the fastest: torch default {x(gt)}, tuned {x(gu)} "
                  f"over {len(rows)} classes."]
    ratios = [r["tuned_vs_torch"] for r in rows if r["tuned_vs_torch"]]
    if ratios:
        worst = max(rows, key=lambda r: r["tuned_vs_torch"] or 0.0)
        lines += ["", f"Tuned time over torch default's: worst {worst['tuned_vs_torch']:.3f}x "
                      f"({worst['workload']} {worst['class']}), geometric mean {geomean(ratios):.3f}x."]
    moved = [r for r in rows if r["tuned"] != r["torch_default"]]
    lines += ["", "Classes whose tuned choice differs from torch's default:"]
    lines += [f"- {r['workload']} {r['class']}: {r['tuned']} {us(r['tuned_us'])} us vs {r['torch_default']} "
              f"{us(r['torch_us'])} us; {r['decision']}" for r in moved] or ["- none"]
    lines += ["", "Classes that kept the default, and why:"]
    kept = [(t.workload.name, r.shape.name, r.decision.why)
            for t in results for r in t.results if r.decision is not None and r.decision.winner is None]
    lines += [f"- {w} {c}: {why}" for w, c, why in kept] or ["- none"]
    undecided = sum(r.decision is None for t in results for r in t.results)
    if undecided:
        lines.append(f"- {undecided} classes were measured once and not decided (--verify, or a file of version 1)")
    lines += ["", "Excluded and skipped:"]
    for t in results:
        for r in t.results:
            for b, why in sorted(r.excluded.items()):
                lines.append(f"- excluded {b} in {t.workload.name} {r.shape.name}: {why}")
        for name, why in t.skipped:
            lines.append(f"- {t.workload.name} {name}: {why}")
    return "\n".join(lines) + "\n"


def tuned_choice(registry: attnsel.Registry, platform: attnsel.Platform) -> Callable[[Workload, ShapeClass], str]:
    """What selecting with `registry` (the overlay merged) answers for a class."""
    def choose(w: Workload, c: ShapeClass) -> str:
        return attnsel.select(registry, query_of(w, c), platform).backend
    return choose


# ---- the GPU side -------------------------------------------------------------------------------------

class TorchRunner(Runner):  # pragma: no cover - needs a CUDA device
    """Runs the class's SDPA call on a CUDA device with each backend forced."""

    def __init__(self, device: str = "cuda", warmup: int = 2, target_ms: float = 1.0):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.warmup, self.target_ms = warmup, target_ms
        self._inner: Dict[tuple, int] = {}
        self._inputs_key = None
        self._inputs = None

    def _tensors(self, w: Workload, c: ShapeClass):
        key = (w, c)
        if self._inputs_key != key:
            self._inputs = None
            torch = self.torch
            self.torch.cuda.empty_cache()
            dt = getattr(torch, w.dtype)
            g = torch.Generator(device=self.device).manual_seed(0)
            q = torch.randn(c.batch, w.num_heads, c.seq_q, w.head_size, device=self.device, dtype=dt, generator=g)
            k = torch.randn(c.batch, w.num_kv_heads, c.seq_kv, w.head_size, device=self.device, dtype=dt, generator=g)
            v = torch.randn(c.batch, w.num_kv_heads, c.seq_kv, w.head_size_v, device=self.device, dtype=dt,
                            generator=g)
            self._inputs, self._inputs_key = (q, k, v), key
        return self._inputs

    def _call(self, w: Workload, c: ShapeClass, backend: str, q=None, k=None, v=None):
        import attnsel.torch as at

        if q is None:
            q, k, v = self._tensors(w, c)
        with at.use_backend(backend):
            return at._TORCH_SDPA(q, k, v, is_causal=c.causal, enable_gqa=w.num_kv_heads != w.num_heads)

    def torch_default(self, w: Workload, c: ShapeClass) -> str:
        from torch.nn.attention import SDPBackend

        q, k, v = self._tensors(w, c)
        try:
            idx = self.torch._fused_sdp_choice(q, k, v, None, 0.0, c.causal, enable_gqa=w.num_kv_heads != w.num_heads)
        except RuntimeError as e:
            return f"error: {str(e).splitlines()[0]}"
        return next((n for n, m in SDPBackend.__members__.items() if m.value == idx), f"<{idx}>")

    def check(self, w: Workload, c: ShapeClass, backend: str) -> Optional[str]:
        torch = self.torch
        q, k, v = self._tensors(w, c)
        try:
            out = self._call(w, c, backend)
        except RuntimeError as e:
            return f"did not run: {str(e).splitlines()[0][:160]}"
        # The reference: float32 math on the first KV head's query group (every backend ran the whole call).
        g = w.gqa_group
        with torch.no_grad():
            qs, ks, vs = q[:, :g].float(), k[:, :1].float(), v[:, :1].float()
            ref = self._call(w, c, "MATH", qs, ks, vs)
        got = out[:, :g].float()
        atol, rtol = TOLERANCE[w.dtype]
        err = (got - ref).abs()
        bad = err > atol + rtol * ref.abs()
        if bool(torch.isnan(got).any()) or bool(bad.any()):
            return (f"wrong output: max abs error {float(err.max()):.3g} against the float32 reference "
                    f"(tolerance {atol:g} + {rtol:g}*|ref|)")
        return None

    def time(self, w: Workload, c: ShapeClass, backend: str, reps: int) -> List[float]:
        """`reps` per-call microseconds: each sample times `inner` back-to-back calls between two CUDA
        events, inside one switch setting, so a short kernel is not measured as Python overhead. `inner` is
        found once per class and backend (samples of about target_ms); each call warms up first."""
        import attnsel.torch as at

        torch = self.torch
        q, k, v = self._tensors(w, c)
        gqa = w.num_kv_heads != w.num_heads
        sdpa = at._TORCH_SDPA

        def run(n):
            for _ in range(n):
                sdpa(q, k, v, is_causal=c.causal, enable_gqa=gqa)

        def timed(n):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            run(n)
            e.record()
            torch.cuda.synchronize()
            return s.elapsed_time(e)  # milliseconds

        with at.use_backend(backend):
            run(self.warmup)
            torch.cuda.synchronize()
            key = (w, c, backend)
            if key not in self._inner:
                probe = timed(1)
                self._inner[key] = max(1, min(100, int(math.ceil(self.target_ms / max(probe, 1e-3)))))
            inner = self._inner[key]
            return [timed(inner) * 1000.0 / inner for _ in range(reps)]


# ---- command line -------------------------------------------------------------------------------------

def _ints(text: str) -> List[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def _progress(done: int, total: int, label: str) -> None:  # pragma: no cover - a terminal nicety
    width = 30
    fill = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} {label[:50]:<50}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def workloads_from_args(a: argparse.Namespace) -> List[Workload]:
    if a.preset:
        return preset(a.preset)
    if a.model_config is not None:
        if not a.model_config:
            raise ValueError("--model-config: the path is empty (an unset variable?)")
        q = attnsel.Query.from_model_config(a.model_config, **({"dtype": a.dtype} if a.dtype else {}))
        if q.mode != "standard":
            raise ValueError(f"--model-config: {a.model_config} is an MLA model (mode {q.mode}): its layers attend "
                             f"over the compressed latent KV (head size {q.head_size}), which no plain SDPA call "
                             "describes; tune does not time MLA kernels")
        heads, kv_heads, d, dv = q.num_heads, q.num_kv_heads or q.num_heads, q.head_size, q.head_size_v or q.head_size
        dtype = a.dtype or q.dtype
    else:
        if not (a.num_heads and a.head_size):
            raise ValueError("give --preset, --model-config, or --num-heads and --head-size")
        heads, kv_heads, d, dv = a.num_heads, a.num_kv_heads or a.num_heads, a.head_size, a.head_size
        dtype = a.dtype or "bfloat16"
    if heads % kv_heads:
        raise ValueError(f"--num-kv-heads {kv_heads} does not divide --num-heads {heads}")
    if a.encoder:
        classes = encoder_classes(a.tokens or [256, 1024, 4096], a.encoder_batch)
    else:
        classes = decoder_classes(a.prefill if a.prefill is not None else [128, 512, 2048, 8192],
                                  a.decode_batch if a.decode_batch is not None else [1, 8, 64],
                                  a.decode_kv if a.decode_kv is not None else [1024, 8192])
    return [Workload(a.name or "custom", heads, kv_heads, d, dv, dtype, classes)]


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer in [1, 1000]")
    return n


def _percent(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not (math.isfinite(v) and 0.0 <= v <= 1000.0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage in [0, 1000]")
    return v


def verify(workloads: Sequence[Workload], overlay_path: str, platform: attnsel.Platform, runner: Runner,
           a: argparse.Namespace, method: Method, command: str, data_error: Callable[[str], None]) -> int:
    """--verify: one interleaved pass over every class with the overlay layered on torch_sdpa, reported
    as tuned against torch's default (the check of an overlay in a process of its own)."""
    merged = attnsel.torch_sdpa_registry()
    try:
        merged.merge(overlay_path)
    except (OSError, ValueError, attnsel.CatalogError) as e:
        data_error(f"--verify: {overlay_path}: {e}")
    base = attnsel.torch_sdpa_registry()
    results = tune(workloads, base, platform, runner, a.budget, progress=_progress, method=method, decide=False)
    rows = regret_rows(results, tuned_choice(merged, platform))
    text = report(results, rows, command)
    try:
        if a.report:
            write_atomic(a.report, text)
        if a.json:
            write_atomic(a.json, _json_text({**to_json(results), "rows": rows}))
    except (OSError, ValueError) as e:
        data_error(str(e))
    if not a.report:
        sys.stdout.write(text)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attnsel.tune", description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=["llama3-8b", "vit", "llm+vit", "heldout"])
    ap.add_argument("--model-config", help="a Hugging Face config.json (heads, KV heads, head size, dtype)")
    ap.add_argument("--num-heads", type=int)
    ap.add_argument("--num-kv-heads", type=int)
    ap.add_argument("--head-size", type=int)
    ap.add_argument("--dtype", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("--name", help="the workload's name in notes and the report")
    ap.add_argument("--prefill", type=_ints, help="prefill lengths (default 128,512,2048,8192)")
    ap.add_argument("--decode-batch", type=_ints, help="decode batch sizes (default 1,8,64)")
    ap.add_argument("--decode-kv", type=_ints, help="decode KV lengths (default 1024,8192)")
    ap.add_argument("--encoder", action="store_true", help="a non-causal encoder over --tokens")
    ap.add_argument("--tokens", type=_ints)
    ap.add_argument("--encoder-batch", type=int, default=1)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds; classes past it are skipped and listed")
    defaults = Method()
    ap.add_argument("--rounds", type=_count, default=defaults.rounds, help="interleaved rounds per backend")
    ap.add_argument("--reps", type=_count, default=defaults.reps, help="samples per backend and round")
    ap.add_argument("--spread-limit", type=_percent, default=defaults.spread_limit_pct,
                    help="percent; a winner or default spreading more is measured again, then keeps the default")
    ap.add_argument("--retries", type=int, choices=range(0, 11), default=defaults.retries, metavar="0..10")
    ap.add_argument("--min-gain", type=_percent, default=defaults.min_gain_pct,
                    help="percent; the least gain over the default that may reorder (the spreads can raise it)")
    ap.add_argument("--confirm-rounds", type=_count, default=defaults.confirm_rounds)
    ap.add_argument("--verify", metavar="OVERLAY",
                    help="re-time the classes with OVERLAY layered on torch_sdpa and report the tuned choice "
                         "against torch's default; writes no overlay")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--from-json", metavar="FILE",
                    help="rewrite the overlay and report from recorded measurements (a --json file); no GPU")
    ap.add_argument("--out", help="the overlay to write (catalog JSON, format 2); required unless --verify")
    ap.add_argument("--report", help="a Markdown report to write (default: standard output)")
    ap.add_argument("--json", help="every measurement as JSON")
    a = ap.parse_args(argv)
    if not a.out and not a.verify:
        ap.error("--out is required (unless --verify)")
    if a.verify and a.from_json:
        ap.error("--verify re-times on this GPU; it does not take --from-json")
    method = Method(a.rounds, a.reps, a.spread_limit, a.retries, a.min_gain, a.confirm_rounds)
    command = shlex.join(["python", "-m", "attnsel.tune", *(sys.argv[1:] if argv is None else argv)])

    def data_error(message: str) -> None:  # bad measurements or an unwritable file: exit 1, no traceback
        ap.exit(1, f"{ap.prog}: error: {message}\n")

    if a.from_json:
        try:
            with open(a.from_json, "rb") as f:
                results = read_measurements(f.read())
        except (OSError, ValueError) as e:
            data_error(f"--from-json: {a.from_json}: {e}")
        if not results:
            data_error(f"--from-json: {a.from_json}: no workloads were measured")
        platform = results[0].platform
    else:
        try:
            workloads = workloads_from_args(a)
        except (ValueError, attnsel.CatalogError) as e:
            ap.error(str(e))
        import attnsel.torch as at

        platform = at.platform(a.device)
        try:
            check_platform(platform)
        except ValueError as e:
            ap.error(str(e))
        runner = TorchRunner(a.device)
        if a.verify:
            return verify(workloads, a.verify, platform, runner, a, method, command, data_error)
        results = tune(workloads, attnsel.torch_sdpa_registry(), platform, runner, a.budget, progress=_progress,
                       method=method)
        driver = attnsel.detect_platform().platform.components.get("cuda_driver")
        import torch

        torch_version = torch.__version__
        for t in results:
            t.machine = {"attnsel": attnsel.__version__, "torch": torch_version,
                         **({"driver": driver} if driver else {})}
        try:
            check_results(results)
        except ValueError as e:
            data_error(f"the measurements cannot be kept: {e}")
    # Everything is built and checked before the first file is replaced: the overlay must load on
    # torch_sdpa (merged from its temporary file), so a refused run leaves --out as it was.
    merged = attnsel.torch_sdpa_registry()
    try:
        doc = overlay(results, command=command)
        text = _json_text(doc)
        rows = []
        with _staged(a.out, text) as staged:
            merged.merge(staged)
            rows = regret_rows(results, tuned_choice(merged, platform))
            rep = report(results, rows, command)
            extra = _json_text({**to_json(results), "rows": rows}) if a.json else None
            others = [(a.report, rep)] if a.report else []
            if extra is not None:
                others.append((a.json, extra))
            for path, body in others:
                write_atomic(path, body)
    except (OSError, ValueError, attnsel.CatalogError) as e:
        data_error(str(e))
    if not a.report:
        sys.stdout.write(rep)
    return 0


def _json_text(doc: object) -> str:
    """JSON text as the loader reads it: NaN and Infinity are refused (ValueError), never written."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def _temp_beside(path: str, text: str) -> str:
    """`text` in a new temporary file in `path`'s directory, flushed to disk; its name."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: str, text: str) -> None:
    """Replaces `path` with `text` at once: a reader sees the old file or the new one, never a part, and
    two writers each replace the whole file (the last one wins), never interleave."""
    os.replace(_temp_beside(path, text), path)


class _staged:
    """`with _staged(path, text) as tmp:` writes `text` beside `path`; the body may check the file at
    `tmp`; on a clean exit it replaces `path`, on an exception it is removed and `path` is untouched."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text, self.tmp = path, text, ""

    def __enter__(self) -> str:
        self.tmp = _temp_beside(self.path, self.text)
        return self.tmp

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            os.replace(self.tmp, self.path)
        else:
            os.unlink(self.tmp)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
