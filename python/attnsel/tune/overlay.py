# SPDX-License-Identifier: Apache-2.0
"""What a tuning run writes: the measured catalog overlay (one rule per shape class and span of head sizes
whose winner was confirmed, with the machine's fingerprint), the regret of each choice, and the Markdown
report."""
from __future__ import annotations

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class Scope:
    """The calls one measured rule covers: one shape class (its kind and ranges) on a span of head sizes,
    any head count, where the workloads measured agree. `confirmed` beat the default in both passes;
    `unconfirmed` had the same fastest backend and default without a confirmed gain (noise or margin;
    a second pass that timed it no faster breaks the span instead), so they neither break the span nor
    count as its evidence: the head sizes end at the confirmed ones, the dtypes are the confirmed ones'.
    `exact`: the rule holds for its one workload's head counts alone (another workload of the same head
    size disagreed)."""

    winner: str
    default: str
    confirmed: Tuple[Tuple[Workload, ClassResult], ...]
    unconfirmed: Tuple[Tuple[Workload, ClassResult], ...] = ()
    head_sizes: Tuple[int, ...] = ()
    dtypes: Tuple[str, ...] = ()
    exact: bool = False


def _label(r: ClassResult) -> Optional[Tuple[str, str]]:
    """(the backend the class puts first, its default): "" first where the default holds (the default
    was fastest, or the class had no timings); None where it was not decided."""
    if r.decision is None:
        return None
    if r.decision.winner is not None:
        return (r.decision.winner, r.default)
    best, default = r.fastest, r.time_of(r.default)
    if best is None or default is None or best.median_us >= default.median_us:
        return ("", r.default)
    # Not confirmed: the first pass's fastest, unless a second pass timed it no faster than the default.
    again = {t.backend: t.median_us for t in r.decision.confirm}
    if best.backend in again and r.default in again and again[best.backend] >= again[r.default]:
        return ("", r.default)
    return (best.backend, r.default)


def _span(heads: Sequence[int]) -> Tuple[int, ...]:
    """The head sizes a span of measured ones covers: each measured one and every multiple of 8 between."""
    lo, hi = min(heads), max(heads)
    return tuple(sorted(set(heads) | set(range((lo + 7) // 8 * 8, hi + 1, 8))))


def scopes(results: Sequence[TuneResult]) -> List[Scope]:
    """The measured rules' scopes. The classes of one kind and ranges are taken across workloads in order
    of head size; adjacent head sizes whose workloads put the same backend first over the same default
    form one span, and a span with a confirmed winner becomes one rule over the head sizes from its least
    to its greatest confirmed one (multiples of 8 between), the dtypes measured there and any head count;
    workloads of the span whose gain was not confirmed neither break it nor extend it. A head size whose
    workloads disagree breaks the span, and each of its confirmed workloads gets a rule of its own head
    counts (exact)."""
    groups: dict = {}
    for t in results:
        for r in t.results:
            c = r.shape
            groups.setdefault((c.kind, c.causal, c.seq_q_range, c.seq_kv_range, c.batch_range), []).append(
                (t.workload, r))
    out: List[Scope] = []

    def close(label, members):
        confirmed = tuple((w, r) for w, r in members if r.decision and r.decision.winner is not None)
        if not (label and label[0] and confirmed):
            return
        # The span ends at the confirmed head sizes: an unconfirmed one beyond them is not covered.
        lo, hi = min(w.head_size for w, _ in confirmed), max(w.head_size for w, _ in confirmed)
        inside = [(w, r) for w, r in members if lo <= w.head_size <= hi]
        out.append(Scope(label[0], label[1], confirmed, tuple(m for m in inside if m not in confirmed),
                         _span([w.head_size for w, _ in inside]), tuple(sorted({w.dtype for w, _ in confirmed}))))

    for members in groups.values():
        by_head: dict = {}
        for w, r in members:
            by_head.setdefault(w.head_size, []).append((w, r))
        label, run = None, []
        for h in sorted(by_head):
            labels = {_label(r) for _, r in by_head[h]}
            here = labels.pop() if len(labels) == 1 else None
            if here is not None and here == label:
                run += by_head[h]
                continue
            close(label, run)
            label, run = here, list(by_head[h]) if here is not None else []
            if here is None:  # the workloads of this head size disagree: each confirmed one alone
                out += [Scope(r.decision.winner, r.default, ((w, r),), (), (h,), (w.dtype,), True)
                        for w, r in by_head[h] if r.decision and r.decision.winner is not None]
        close(label, run)
    return out


def _geomean_times(scope: Scope) -> List[dict]:
    """The second pass's times of the winner and the default, the geometric mean over the confirmed
    workloads that timed both (the winner alone where none did), each with the largest spread."""
    def confirm_times(r):
        return {t.backend: t for t in r.decision.confirm}
    pairs = [confirm_times(r) for _, r in scope.confirmed]
    if not any(scope.winner in p for p in pairs):
        raise ValueError(f"a measured rule needs its winner {scope.winner}'s second-pass time: the scope's confirmed "
                         "workloads have none")
    both = [p for p in pairs if scope.winner in p and scope.default in p]
    names = [scope.winner, scope.default] if both else [scope.winner]
    use = both or [p for p in pairs if scope.winner in p]
    times = []
    for b in names:
        ts = [p[b] for p in use]
        times.append({"backend": b, "median_us": round(geomean([t.median_us for t in ts]) or 0.0, 3),
                      "spread_pct": round(max(t.spread_pct for t in ts), 2)})
    return sorted(times, key=lambda t: t["median_us"])


def _member(w: Workload) -> str:
    return f"{w.name} (d{w.head_size}, {w.num_heads}/{w.num_kv_heads} heads, {w.dtype})"


def rule_of(scope: Scope, platform: attnsel.Platform, kernel_components: Sequence[str] = ()) -> dict:
    """The measured policy rule (catalog format 2) of a scope (scopes). ValueError for a scope without a
    confirmed workload or its second-pass times."""
    if not scope.confirmed:
        raise ValueError(f"rule_of: no confirmed workload puts {scope.winner} first: no rule")
    w0, r0 = scope.confirmed[0]
    c = r0.shape
    cap = platform.arch
    check_platform(platform)
    device, comps = fingerprint(platform, kernel_components)
    call = query_of(w0, c)  # the call as select sees it
    # Its attention type: a causal prefill and an encoder call of one shape differ.
    rule = {"domain": "decoder", "vendor": "cuda", "min_capability": cap, "max_capability": cap,
            "attn_types": [call.attn_type], "dtypes": list(scope.dtypes), "head_sizes": list(scope.head_sizes)}
    if scope.exact:
        rule["min_num_heads"] = rule["max_num_heads"] = w0.num_heads
        feats = sorted(call.features)
        if feats:
            rule["features"] = feats
    rule["without_features"] = list(_CALL_FEATURES)
    # An encoder class starts at 2 tokens: one is a decode call (measurements recorded before that rule
    # say 1).
    lo_q = (max(c.seq_q_range[0], 2), c.seq_q_range[1]) if c.kind == "encoder" else c.seq_q_range
    rule["seq_len_q"] = _range(lo_q, SEQ_LIMIT)
    if c.seq_kv_range:
        rule["seq_len_kv"] = _range(c.seq_kv_range, SEQ_LIMIT)
    if c.batch_range:
        rule["batch_size"] = _range(c.batch_range, BATCH_LIMIT)
    if scope.exact:
        rule["gqa_group"] = {"min": w0.gqa_group, "max": w0.gqa_group}
    excluded = sorted({b for _, r in scope.confirmed for b in r.excluded})
    kind = "causal" if c.causal else "non-causal"
    if len(scope.confirmed) == 1:
        note = (f"measured: {w0.name} {c.name} ({kind}, d{w0.head_size}, {w0.num_heads}/{w0.num_kv_heads} heads); "
                f"{scope.winner} before the default {scope.default}, {r0.decision.why}")
    else:
        note = (f"measured: {c.name} ({kind}) on " + ", ".join(_member(w) for w, _ in scope.confirmed)
                + f"; {scope.winner} before the default {scope.default}, confirmed on each")
    if scope.unconfirmed:
        note += ("; the same fastest, unconfirmed, on " + ", ".join(_member(w) for w, _ in scope.unconfirmed))
    if not scope.exact:
        heads = scope.head_sizes
        note += (f"; holds for head size {heads[0]}" if len(heads) == 1 else
                 f"; holds for head sizes {heads[0]} to {heads[-1]} (multiples of 8)") + ", any head count"
    if excluded:
        note += f"; excluded {', '.join(excluded)}"
    rule["note"] = note
    # The winner moves first; every other backend keeps the catalog's order. A backend whose output was
    # wrong for a class of the scope leaves the order.
    wrong = {b for _, r in scope.confirmed for b, why in r.excluded.items() if why.startswith("wrong output")}
    order: List[str] = []
    for _, r in scope.confirmed:
        order += [b for b in (r.order or [t.backend for t in r.timings]) if b not in order]
    rule["order"] = [scope.winner] + [b for b in order if b != scope.winner and b not in wrong]
    measured = {"times": _geomean_times(scope)}
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
    """The catalog overlay: one measured rule per scope (scopes: a class's span of head sizes whose winner
    was confirmed, Decision); every other class keeps the catalog's order and has no rule. Facts of the
    machine that no rule checks (the driver, attnsel's version) are recorded in the description."""
    if not results:
        raise ValueError("overlay: nothing was measured")
    platform = results[0].platform
    # Every result's kernel components, in the rules' fingerprint and the description alike.
    kernel_components = sorted({n for t in results for n in t.components})
    device, comps = fingerprint(platform, kernel_components)
    on, _ = switches(platform)
    comps = comps + [f"cuDNN {'preferred' if 'cudnn_preferred' in on else 'deprioritized'}"]
    rules = [rule_of(s, platform, kernel_components) for s in scopes(results)]
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
    geomeans, the worst tuned time over torch default's, the classes the overlay moves and why, the
    measured rules and the head sizes each spans, the classes that kept the default and why, and what was
    excluded or skipped."""
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
    rules = scopes(results)
    lines += ["", "Measured rules (each class's span of head sizes, any head count unless exact):"]
    for sc in rules:
        heads = sc.head_sizes
        span = f"d{heads[0]}" if len(heads) == 1 else f"d{heads[0]} to d{heads[-1]}"
        who = ", ".join(w.name for w, _ in sc.confirmed)
        more = f"; unconfirmed, same fastest: {', '.join(w.name for w, _ in sc.unconfirmed)}" if sc.unconfirmed else ""
        lines.append(f"- {sc.confirmed[0][1].shape.name}, {span}{' (exact head counts)' if sc.exact else ''}, "
                     f"{'/'.join(sc.dtypes)}: {sc.winner} before {sc.default}; confirmed on {who}{more}")
    if not rules:
        lines.append("- none")
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
