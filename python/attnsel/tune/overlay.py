# SPDX-License-Identifier: Apache-2.0
"""What a tuning run writes: the measured catalog overlay (one rule per confirmed class, with the machine's
fingerprint), the regret of each choice, and the Markdown report."""
from __future__ import annotations

import math
from typing import Callable, List, Optional, Sequence, Tuple

import attnsel

from .measure import ClassResult, TuneResult
from .workload import BATCH_LIMIT, SEQ_LIMIT, ShapeClass, Workload, query_of

# Features that change which kernels run or what they cost; a measured rule is for calls without them.
_CALL_FEATURES = ("dropout", "attn_mask", "attn_mask_3d", "attn_mask_grad", "requires_grad", "deterministic",
                  "nested")
# Components whose exact versions a measurement holds for (those the platform states).
FINGERPRINT_COMPONENTS = ("torch", "cudnn", "cuda_runtime", "cuda_driver")
# Components without a version that change torch_sdpa's default order: a measurement holds only where
# each is present or absent as it was (cudnn_preferred: torch puts cuDNN first; TORCH_CUDNN_SDPA_DEPRIORITIZED).
SWITCHES = ("cudnn_preferred",)


def check_platform(platform: attnsel.Platform) -> None:
    """ValueError unless measurements on `platform` can be fingerprinted: a CUDA device with a name (a
    measurement without a device name would hold on every device of the arch)."""
    if platform.vendor != "cuda" or platform.arch is None:
        raise ValueError(f"tune measures CUDA devices; platform {platform} is not one")
    if not platform.device_name:
        raise ValueError(f"platform {platform} states no device name: a measurement must name its device")


def fingerprint(platform: attnsel.Platform, kernel_components: Sequence[str] = ()) -> Tuple[Optional[str], List[str]]:
    """The device name and the exact component versions a measurement on `platform` holds for: the
    FINGERPRINT_COMPONENTS it states and those the timed kernels come from (TuneResult.components)."""
    comps = platform.components
    names = list(FINGERPRINT_COMPONENTS) + [n for n in kernel_components if n not in FINGERPRINT_COMPONENTS]
    return platform.device_name, [f"{n}={comps[n]}" for n in names if comps.get(n)]


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


def rule_of(r: ClassResult, w: Workload, platform: attnsel.Platform, kernel_components: Sequence[str] = ()) -> dict:
    """The class's measured policy rule (catalog format 2), for a class whose decision reorders."""
    c = r.shape
    cap = platform.arch
    check_platform(platform)
    device, comps = fingerprint(platform, kernel_components)
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
    device, comps = fingerprint(platform, results[0].components)
    on, _ = switches(platform)
    comps = comps + [f"cuDNN {'preferred' if 'cudnn_preferred' in on else 'deprioritized'}"]
    rules = [rule_of(r, t.workload, platform, t.components) for t in results for r in t.results
             if r.decision is not None and r.decision.winner is not None]
    # The backends beyond the base catalog that a rule names travel with the overlay, so it loads on the
    # base alone.
    named = {b for rule in rules for b in rule["order"]}
    kernels_catalog = results[0].kernels_catalog or {}
    backends = [d for d in kernels_catalog.get("backends", []) if d.get("name") in named]
    extra = "; ".join(f"{k} {v}" for k, v in sorted(results[0].machine.items()))
    return {
        "format": "attnsel-catalog",
        "version": 2,
        "name": name,
        "description": (f"Attention backends measured on {device or 'an unnamed device'} "
                        f"(cuda {platform.arch}; {', '.join(comps) or 'no component versions'}"
                        f"{'; ' + extra if extra else ''}) on {results[0].date}: each rule moves first a backend "
                        "that beat the default in two passes; layer it on torch_sdpa"),
        "source": command or "python -m attnsel.tune",
        "backends": backends,
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
