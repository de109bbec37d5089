# SPDX-License-Identifier: Apache-2.0
"""Timing and checking any attention kernel: the runner for callables (attnsel.kernels' signature), by
backend name, on a CUDA device (CUDA events) or the CPU (the wall clock)."""
from __future__ import annotations

import contextlib
import math
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence

import attnsel

from .measure import Runner
from .workload import TOLERANCE, ShapeClass, Workload


def _first_line(e: BaseException) -> str:
    text = str(e).splitlines()[0][:160] if str(e) else ""
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


_PROBE_CALLS = 4  # calls the probe times to size a sample
_MAX_INNER = 2000  # calls in one sample at the most (about target_ms of a 2.5 us kernel)
# Queued samples hold at most this many calls at first: CUDA's launch queue takes about a thousand
# launches before the host blocks, and a call may launch several kernels (fewer calls are taken when the
# queue still fills).
_MAX_QUEUED = 400
_QUEUE_MARGIN = 1.25  # the device sleeps this much longer than the host took to queue the last sample
_CYCLES_PER_S = 2.0e9  # a first guess at the sleep's clock, replaced by the rate the device shows
_SETTLE_SAMPLES = 4  # untimed queued samples at most, until the sleep covers the host's queueing


class _Queue:
    """Queued samples on a CUDA device (`cuda` is torch.cuda): the device sleeps while the host queues a
    sample's calls, so they run back to back, as under a model whose host runs ahead, whatever Python's
    launch rate. The sleep lasts the host's last queueing time of the same calls and a quarter, in cycles
    at the rate the device last showed (an event before and after the sleep)."""

    def __init__(self, cuda, clock: Callable[[], float]):
        self.cuda, self.clock = cuda, clock
        self.cycles_per_s = _CYCLES_PER_S
        self.queue_s: Dict[tuple, float] = {}  # per class and backend: the host's last queueing time

    def sample(self, key: tuple, run: Callable[[], None]):
        """One sample of the calls `run` queues: (milliseconds on the device, whether the sleep covered
        the host's queueing, whether the sleep was sized from an earlier sample). A sized sleep that does
        not cover means the launch queue filled and the host waited on the device."""
        cuda = self.cuda
        before, start, end = (cuda.Event(enable_timing=True) for _ in range(3))
        cycles = int(self.queue_s.get(key, 0.0) * _QUEUE_MARGIN * self.cycles_per_s)
        h0 = self.clock()
        before.record()
        cuda._sleep(max(cycles, 1))
        start.record()
        run()
        end.record()
        queued_s = self.clock() - h0
        cuda.synchronize()
        slept_ms = before.elapsed_time(start)
        if cycles > 0 and slept_ms >= 0.2:  # a sleep long enough to tell the clock
            self.cycles_per_s = cycles / (slept_ms / 1000.0)
        self.queue_s[key] = queued_s
        return start.elapsed_time(end), queued_s * 1000.0 <= slept_ms, cycles > 0

    def samples(self, key: tuple, run: Callable[[int], None], inner: int, reps: int):
        """(`reps` per-call milliseconds, the calls per sample used). Untimed samples first, until one's
        sleep covers the host's queueing (at most _SETTLE_SAMPLES): the device leaves its idle clocks,
        the queueing time is learnt, and where a sized sleep still does not cover, the launch queue is
        full and a sample takes half the calls."""
        for _ in range(_SETTLE_SAMPLES):
            _, covered, sized = self.sample(key, lambda: run(inner))
            if covered:
                break
            if sized:
                inner = max(1, inner // 2)
        return [self.sample(key, lambda: run(inner))[0] / inner for _ in range(reps)], inner


class KernelRunner(Runner):
    """Runs each class's call with kernels given by backend name.

    `kernels` maps catalog backend names to callables taking SDPA's arguments positionally (query, key,
    value, attn_mask, dropout_p, is_causal, scale, enable_gqa) and returning the output (batch, heads,
    query length, value dim). A kernel that raises, or returns anything but a tensor of that shape,
    dtype and device, or values off the float32 reference by more than the dtype's tolerance, is
    excluded with the reason and never chosen. Names must be backends of the registry tuned on (tune
    raises ValueError before measuring otherwise); a backend the catalog supports without a kernel here
    is listed as not timed. `components` names the platform components the kernels come from (say
    "flashinfer"): their versions join each measured rule's fingerprint. `baseline`, where given, names
    what the engine runs without attnsel (reported beside the catalog's default). `clock` (seconds) times
    the calls off a CUDA device. `cuda_graphs` times each sample as the replay of a CUDA graph of the
    calls: the kernels without their launches, as an engine that captures its steps (vLLM's decode) runs
    them, and the way to time a kernel too short to time alone; a kernel that cannot be captured is
    dropped with the reason. Otherwise, on a CUDA device, `queued` (the default) has the device sleep while
    the host queues each sample's calls, so the kernels run back to back as they do under a model that
    keeps the host ahead, not at the rate Python launches them (the host's `clock` times the queueing);
    `queued=False` times the calls as they are launched (a kernel shorter than its launch then times the
    launch)."""

    def __init__(self, kernels: Mapping[str, Callable[..., object]],
                 device: str = "cuda", warmup: int = 2, target_ms: float = 5.0,
                 components: Sequence[str] = (), baseline: Optional[str] = None,
                 clock: Callable[[], float] = time.perf_counter, cuda_graphs: bool = False,
                 queued: bool = True):
        import torch

        bad = [n for n, k in kernels.items() if not isinstance(n, str) or not callable(k)]
        if bad:
            raise TypeError(f"kernels: {bad!r}: each entry must be a backend name mapped to a callable")
        if not kernels:
            raise ValueError("kernels: give at least one backend's kernel")
        self.torch = torch
        self.kernels = dict(kernels)
        self.device = torch.device(device)
        if cuda_graphs and self.device.type != "cuda":
            raise ValueError(f"cuda_graphs: CUDA graphs need a CUDA device, not {self.device.type}")
        self.cuda_graphs = bool(cuda_graphs)
        # Graph replays are queued by construction; off a CUDA device there is no queue.
        self.queued = bool(queued) and not self.cuda_graphs and self.device.type == "cuda"
        self.warmup, self.target_ms = warmup, target_ms
        self.components = tuple(components)
        self.baseline = baseline
        self.clock = clock
        self._inner: Dict[tuple, int] = {}
        self._queue = _Queue(torch.cuda, clock) if self.queued else None
        self._inputs_key = None
        self._inputs = None

    # ---- the Runner interface ----

    def validate(self, registry: attnsel.Registry) -> None:
        unknown = sorted(n for n in self.kernels if n not in registry.backends)
        if unknown:
            raise ValueError(f"kernels for {', '.join(unknown)}: not backends of the catalog '{registry.name}' "
                             f"by their own names (its backends: {', '.join(registry.backends)}); layer a catalog "
                             "that describes them first (Registry.merge, attnsel.kernels.registry)")

    def has(self, backend: str) -> bool:
        return backend in self.kernels

    def torch_default(self, w: Workload, c: ShapeClass) -> str:
        return self.baseline or ""

    def check(self, w: Workload, c: ShapeClass, backend: str) -> Optional[str]:
        torch = self.torch
        q, k, v = self._tensors(w, c)
        try:
            with torch.no_grad():
                out = self._call(backend, c, w, q, k, v)
        except Exception as e:  # a kernel may raise anything; it is excluded, the run goes on
            return f"did not run: {_first_line(e)}"
        want = (c.batch, w.num_heads, c.seq_q, w.head_size_v)
        if not isinstance(out, torch.Tensor):
            return f"wrong output: returned {type(out).__name__}, not a tensor"
        if tuple(out.shape) != want or out.dtype != q.dtype or out.device != q.device:
            return (f"wrong output: returned {tuple(out.shape)} {out.dtype} on {out.device}, expected {want} "
                    f"{q.dtype} on {q.device}")
        # The reference: float32 eager attention on the first KV head's query group.
        g = w.gqa_group
        try:
            with torch.no_grad():
                ref = self._reference(c, q[:, :g].float(), k[:, :1].float(), v[:, :1].float())
        except RuntimeError as e:  # torch.OutOfMemoryError is one: the float32 reference of a large class
            out = None  # the kernel's output too, before the cache is emptied
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            return f"no reference to check against: {_first_line(e)}"
        got = out[:, :g].float()
        atol, rtol = TOLERANCE[w.dtype]
        err = (got - ref).abs()
        bad = err > atol + rtol * ref.abs()
        if bool(torch.isnan(got).any()) or bool(bad.any()):
            return (f"wrong output: max abs error {float(err.nan_to_num(float('inf')).max()):.3g} against the "
                    f"float32 reference (tolerance {atol:g} + {rtol:g}*|ref|)")
        return None

    def time(self, w: Workload, c: ShapeClass, backend: str, reps: int) -> List[float]:
        """`reps` per-call microseconds: each sample times `inner` back-to-back calls (found once per class
        and backend, samples of about target_ms), between CUDA events on a CUDA device (the replay of one
        CUDA graph of them with cuda_graphs), by the wall clock after a synchronisation elsewhere; each
        call warms up first, and one untimed sample precedes the timed ones (a short kernel timed from an
        idle device reads its clock ramp). A kernel that raises becomes a RuntimeError naming it
        (interleaved drops the backend)."""
        return self._samples(w, c, backend, reps, self.kernels[backend], contextlib.nullcontext())

    def _samples(self, w: Workload, c: ShapeClass, backend: str, reps: int, kernel, scope) -> List[float]:
        """time()'s loop for `kernel` called inside `scope` (entered once for all the samples)."""
        torch = self.torch
        q, k, v = self._tensors(w, c)
        cuda = self.device.type == "cuda"
        gqa, causal = w.num_kv_heads != w.num_heads, c.causal

        def run(n):
            for _ in range(n):
                kernel(q, k, v, None, 0.0, causal, None, gqa)

        def captured(n):  # a CUDA graph of n calls, captured after a warm call on a side stream
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                run(1)
            torch.cuda.current_stream().wait_stream(side)
            graph, failed = torch.cuda.CUDAGraph(), []
            try:
                # The current stream is restored even when the capture fails: torch's graph context then
                # raises from capture_end and leaves its capture stream current.
                with torch.cuda.stream(torch.cuda.current_stream()), torch.cuda.graph(graph):
                    try:
                        run(n)
                    except Exception as e:
                        failed.append(e)  # the kernel's own error, which capture_end's would replace
                        raise
            except Exception as e:
                cause = failed[0] if failed else e
                raise RuntimeError(f"cannot be captured in a CUDA graph: {_first_line(cause)}") from cause
            return graph

        def timed(n, graph=None):  # milliseconds
            if cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                if graph is not None:
                    graph.replay()
                else:
                    run(n)
                e.record()
                torch.cuda.synchronize()
                return s.elapsed_time(e)
            t0 = self.clock()
            run(n)
            return (self.clock() - t0) * 1000.0

        try:
            # On the runner's device: streams, events and synchronisations take the current one.
            on_device = torch.cuda.device(self.device) if cuda else contextlib.nullcontext()
            with torch.no_grad(), on_device, scope:
                run(self.warmup)
                if cuda:
                    torch.cuda.synchronize()
                key = (w, c, backend)
                if key not in self._inner:
                    # The probe times a few calls, so that a first call's launch cost does not shrink the
                    # samples of a short kernel.
                    probe = timed(_PROBE_CALLS) / _PROBE_CALLS
                    most = _MAX_QUEUED if self.queued else _MAX_INNER
                    self._inner[key] = max(1, min(most, int(math.ceil(self.target_ms / max(probe, 1e-3)))))
                inner = self._inner[key]
                if self._queue is not None:
                    per_call, self._inner[key] = self._queue.samples(key, run, inner, reps)
                    return [ms * 1000.0 for ms in per_call]
                graph = captured(inner) if self.cuda_graphs else None
                # One untimed sample first: the device leaves its idle clocks before the samples count.
                timed(inner, graph)
                return [timed(inner, graph) * 1000.0 / inner for _ in range(reps)]
        except Exception as e:
            raise RuntimeError(_first_line(e)) from e

    # ---- the call ----

    def _tensors(self, w: Workload, c: ShapeClass):
        key = (w, c)
        if self._inputs_key != key:
            torch = self.torch
            self._inputs = None
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            dt = getattr(torch, w.dtype)
            g = torch.Generator(device=self.device).manual_seed(0)
            q = torch.randn(c.batch, w.num_heads, c.seq_q, w.head_size, device=self.device, dtype=dt, generator=g)
            k = torch.randn(c.batch, w.num_kv_heads, c.seq_kv, w.head_size, device=self.device, dtype=dt, generator=g)
            v = torch.randn(c.batch, w.num_kv_heads, c.seq_kv, w.head_size_v, device=self.device, dtype=dt,
                            generator=g)
            self._inputs, self._inputs_key = (q, k, v), key
        return self._inputs

    def _call(self, backend: str, c: ShapeClass, w: Workload, q, k, v):
        return self.kernels[backend](q, k, v, None, 0.0, c.causal, None, w.num_kv_heads != w.num_heads)

    def _reference(self, c: ShapeClass, q, k, v):
        """Float32 eager attention of each query head of the group against the one KV head, a head at a
        time: the KV head is never copied per query head (at decode batch 256 over 32k keys that copy
        alone is 16 GiB)."""
        from attnsel.kernels import eager_attention

        eager = eager_attention()
        return self.torch.cat([eager(q[:, h:h + 1], k, v, None, 0.0, c.causal, None, False)
                               for h in range(q.size(1))], dim=1)
