# SPDX-License-Identifier: Apache-2.0
"""How attnsel.tune measures: the runner interface, the first pass over a class, and the decision (the spread
limit, the margin and the second pass) that lets a measured winner move first. The timing loop and the
decisions are the C++ ones of <attnsel/catalog/tuning.hpp> (attnsel::time_interleaved, measure_first_pass,
first_verdict, second_pass), which an engine in C++ calls with its own kernels; this module adds the
workload, the catalog and the output check around them."""
from __future__ import annotations

import dataclasses
import datetime
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import attnsel
from attnsel import _attnsel

from .workload import ShapeClass, Workload, query_of

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
    measured again, at most `retries` times. A winner other than the default must beat it by more than
    the margin (the larger of `min_gain_pct` and the two backends' spreads; twice the spread while one is
    over the limit, so a class still that noisy keeps the default unless the gain is beyond what noise
    reaches twice over) in the first pass and again in a second pass of `confirm_rounds` rounds over the
    two (measured again as the first is), run after every class's first pass."""

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
    # Platform components the timed kernels come from (Runner.components): their versions join the
    # fingerprint of every measured rule.
    components: Tuple[str, ...] = ()
    # The catalog (format 2) of the backends timed beside the base catalog's (attnsel.kernels.CATALOG):
    # an overlay whose rules name one of them carries its descriptor.
    kernels_catalog: Optional[dict] = None


class NothingToMeasure(ValueError):
    """A class with no baseline to compare with: tune lists it as skipped, with the message."""


class Runner:
    """What tune needs from a machine. KernelRunner implements it for callables, TorchRunner for SDPA on a
    GPU; tests fake it."""

    components: Tuple[str, ...] = ()  # platform components the kernels come from (their versions are fingerprinted)

    def validate(self, registry: attnsel.Registry) -> None:
        """ValueError, before anything is measured, when the runner times a backend `registry` lacks."""

    def has(self, backend: str) -> bool:
        """Whether the runner can time `backend` (a catalog backend without a kernel is listed, not timed)."""
        return True

    def torch_default(self, w: Workload, c: ShapeClass) -> str:
        raise NotImplementedError

    def time(self, w: Workload, c: ShapeClass, backend: str, reps: int) -> List[float]:
        """`reps` per-call times of the forced backend, microseconds, each finite and > 0 (ValueError
        otherwise). RuntimeError when the kernel cannot run: the backend is dropped with the reason; any
        other exception ends the run."""
        raise NotImplementedError

    def check(self, w: Workload, c: ShapeClass, backend: str) -> Optional[str]:
        """None when the forced backend's output matches the reference, else why not."""
        raise NotImplementedError


def _method(m: Method) -> tuple:
    return (m.rounds, m.reps, m.spread_limit_pct, m.retries, m.min_gain_pct, m.confirm_rounds)


def _timer(w: Workload, c: ShapeClass, runner: Runner) -> Callable[[str, int], List[float]]:
    return lambda backend, reps: runner.time(w, c, backend, reps)


def summarize(backend: str, samples: Sequence[float]) -> Timing:
    """The median and spread (p90 - p10 over the median, percent) of per-call times (attnsel::summarize_samples).
    ValueError for no samples, or one that is not a finite time > 0."""
    return Timing(*_attnsel._tuning_summarize(backend, list(samples)))


def interleaved(w: Workload, c: ShapeClass, backends: Sequence[str], runner: Runner, rounds: int, reps: int,
                excluded: Dict[str, str]) -> List[Timing]:
    """Times `backends` in `rounds` rounds of `reps` samples each, round r starting at backend r (mod n);
    fastest first (attnsel::time_interleaved). A backend that fails while timed (RuntimeError: out of
    memory, a kernel error) is dropped into `excluded`; any other exception propagates."""
    times, dropped = _attnsel._tuning_interleaved(list(backends), _timer(w, c, runner), rounds, reps)
    excluded.update(dict(dropped))
    return [Timing(*t) for t in times]


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
    # The engine's own choice without attnsel; a runner without one ("") compares with the catalog's.
    torch_choice = runner.torch_default(w, c) or default_choice
    excluded: Dict[str, str] = {b: "no kernel given to the runner: not timed" for b in supported if not runner.has(b)}
    candidates = [b for b in supported if runner.has(b)]
    if not torch_choice:
        raise NothingToMeasure("not measured: no backend of the catalog supports the call, and the runner names "
                               "no baseline")
    if default_choice and not runner.has(default_choice):
        # A rule would put its winner ahead of the catalog's default: without the default's time there is
        # nothing to beat.
        raise NothingToMeasure(f"not measured: the catalog's default {default_choice} has no kernel given to "
                               "the runner, so no winner can be shown to beat it")
    if torch_choice not in supported:
        # torch's choice is timed only when it is a backend the catalog knows (a disagreement to report);
        # an error or a name outside the catalog is recorded, never forced.
        if torch_choice in registry and runner.has(torch_choice):
            candidates.append(torch_choice)
        elif torch_choice in registry:
            excluded[torch_choice] = "the baseline has no kernel given to the runner; not timed"
        else:
            excluded[torch_choice] = "torch's choice is not a backend of the catalog; not timed"
    passing = []
    for b in candidates:
        why = runner.check(w, c, b)
        if why is None:
            passing.append(b)
        else:
            excluded[b] = why
    # Timed interleaved, again while the winner's or the default's spread is over the limit
    # (attnsel::measure_first_pass).
    times, attempts, dropped = _attnsel._tuning_measure_first_pass(passing, default_choice, _timer(w, c, runner),
                                                                   _method(method))
    excluded.update(dict(dropped))
    timings = [Timing(*t) for t in times]
    # The catalog's order for the call: the candidates its policy tries (an entry whose condition does not
    # hold on the platform, cuDNN without cudnn_preferred, is skipped and not part of it).
    order = [cand.name for cand in candidates_seen if cand.verdict != "skipped"]
    return ClassResult(c, torch_choice, timings, excluded, unsupported, default_choice or torch_choice, order,
                       attempts)


def gain_over(winner: Timing, default: Timing, method: Method) -> Tuple[float, float]:
    """How much faster the winner is than the default, and the margin it must exceed, both in percent
    (attnsel::gain_over): the larger of min_gain_pct and the two spreads, doubled when a spread is over
    the limit (a noisy pair is told apart only by a gain noise cannot reach twice over)."""
    return _attnsel._tuning_gain_over(dataclasses.astuple(winner), dataclasses.astuple(default), _method(method))


def _first_pass(r: ClassResult) -> tuple:
    return ([dataclasses.astuple(t) for t in r.timings], r.default, r.excluded.get(r.default, ""), r.attempts)


def _decision(d: tuple) -> Decision:
    winner, why, confirmed = d
    return Decision(winner, why, [Timing(*t) for t in confirmed])


def first_verdict(r: ClassResult, method: Method) -> Decision:
    """After the first pass: a Decision that keeps the default (winner None), or one naming the candidate
    winner with why "to confirm" (a second pass decides). attnsel::first_verdict: a noisy pair needs a
    gain beyond twice the spread; a default with wrong output (or that did not run) gives way to the
    fastest backend that passed."""
    return _decision(_attnsel._tuning_first_verdict(*_first_pass(r), _method(method)))


def confirm(w: Workload, r: ClassResult, runner: Runner, method: Method) -> Decision:
    """The second, independent pass (attnsel::second_pass): the candidate winner and the default timed
    again, interleaved (again, at most `retries` times, while either spreads over the limit); the rule
    reorders only when the winner again beats the default by more than the margin (gain_over)."""
    return _decision(_attnsel._tuning_second_pass(*_first_pass(r), _timer(w, r.shape, runner),
                                                  _method(method)))


def tune(workloads: Sequence[Workload], registry: attnsel.Registry, platform: attnsel.Platform, runner: Runner,
         budget_s: float = 600.0, clock: Callable[[], float] = time.monotonic,
         progress: Optional[Callable[[int, int, str], None]] = None, method: Method = Method(),
         decide: bool = True, kernels_catalog: Optional[dict] = None) -> List[TuneResult]:
    """Measures every class of every workload until the budget is spent (the rest are listed as skipped),
    then decides each class (Method): a winner other than the default is timed again in a second pass
    after all first passes, so the two passes are apart in time. decide=False: the first pass only.
    `kernels_catalog` is the catalog layered on the base to describe backends beyond it (recorded, and
    carried by an overlay that names them). ValueError before anything is measured when the runner times
    a backend the registry lacks, or its kernels come from a component the platform does not state with
    a version."""
    runner.validate(registry)
    comps = platform.components
    missing = [n for n in runner.components if not comps.get(n)]
    if missing:
        raise ValueError(f"the kernels come from {', '.join(missing)}, which the platform does not state with a "
                         "version: a measurement must name the version of what it timed (add the component)")
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
                try:
                    results.append(measure(w, c, registry, platform, runner, method))
                except NothingToMeasure as e:
                    skipped.append((c.name, str(e)))
            done += 1
        if progress:
            progress(done, total, w.name)
        out.append(TuneResult(w, platform, results, skipped, clock() - t0,
                              components=tuple(runner.components), kernels_catalog=kernels_catalog))
    for t in out if decide else ():
        for r in t.results:
            if first_verdict(r, method).winner is not None and clock() - start > budget_s:
                r.decision = Decision(None, f"no second pass: the {budget_s:g} s budget was spent")
            else:
                r.decision = confirm(t.workload, r, runner, method)
    return out
