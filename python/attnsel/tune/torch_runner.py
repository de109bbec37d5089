# SPDX-License-Identifier: Apache-2.0
"""The GPU side of attnsel.tune: SDPA calls forced to each backend, checked and timed with CUDA events."""
from __future__ import annotations

import math
from typing import Dict, List, Optional

from .measure import Runner
from .workload import TOLERANCE, ShapeClass, Workload

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
        try:
            with torch.no_grad():
                qs, ks, vs = q[:, :g].float(), k[:, :1].float(), v[:, :1].float()
                ref = self._call(w, c, "MATH", qs, ks, vs)
        except RuntimeError as e:  # torch.OutOfMemoryError is one: the float32 reference of a large class
            out = None  # the backend's output too, before the cache is emptied
            torch.cuda.empty_cache()
            return f"no reference to check against: {str(e).splitlines()[0][:160]}"
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
