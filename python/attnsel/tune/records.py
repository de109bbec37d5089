# SPDX-License-Identifier: Apache-2.0
"""The measurements file (`--json`, `--from-json`): every timing and decision of a run, written and read
back strictly (each refusal names its JSON pointer)."""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Dict, List, Optional, Sequence, Tuple, Union

import attnsel
from attnsel.engines import _bounded_json

from .measure import ClassResult, Decision, Timing, TuneResult
from .workload import BATCH_LIMIT, SEQ_LIMIT, TOLERANCE, ShapeClass, Workload

MEASUREMENTS_FORMAT = "attnsel-tune-measurements"


def to_json(results: Sequence[TuneResult]) -> dict:
    """Every measurement, replayable with from_json (`--from-json`): overlay and report are rewritten
    from it without a GPU."""
    if not results:
        raise ValueError("to_json: nothing was measured")
    first = results[0]
    extra = {}
    if first.components:
        extra["components"] = list(first.components)
    if first.kernels_catalog is not None:
        extra["kernels_catalog"] = first.kernels_catalog
    return {
        "format": MEASUREMENTS_FORMAT, "version": 2, "date": first.date, "machine": first.machine,
        "platform": json.loads(attnsel.to_json(first.platform)), **extra,
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
                self.fail(f"{p}/backend", f"{name!r:.60} is not a backend of the catalog tuned on ({', '.join(backends)})")
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
                self.fail(f"{ptr}/{i}", f"{name!r:.60} is not a backend of the catalog tuned on ({', '.join(backends)})")
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
        backends = list(attnsel.torch_sdpa_registry().backends)
        kernels_catalog = doc.get("kernels_catalog")
        if kernels_catalog is not None:
            self.obj(kernels_catalog, "/kernels_catalog", ("backends",))
            try:
                extra = attnsel.parse_catalog(json.dumps(kernels_catalog, allow_nan=False), "/kernels_catalog")
            except (ValueError, attnsel.CatalogError) as e:
                self.fail("/kernels_catalog", str(e).splitlines()[0])
            backends += [b for b in extra.backends if b not in backends]
        components = tuple(self.text(n, f"/components/{i}") for i, n in enumerate(self.lst(doc.get("components", []),
                                                                                              "/components")))
        for i, n in enumerate(components):
            if not platform.components.get(n):
                self.fail(f"/components/{i}", f"{n} is not a component of /platform with a version")
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
            out.append(TuneResult(workload, platform, results, skipped, seconds, date, machine, components,
                                  kernels_catalog))
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
