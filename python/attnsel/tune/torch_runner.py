# SPDX-License-Identifier: Apache-2.0
"""The GPU side of attnsel.tune for SDPA: each of torch's SDPA backends forced (attnsel.kernels.sdpa), with
more kernel families beside them, and torch's own choice as the baseline."""
from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence

from .kernel_runner import KernelRunner
from .workload import ShapeClass, Workload


class TorchRunner(KernelRunner):  # pragma: no cover - needs a CUDA device
    """Runs the class's SDPA call on a CUDA device with each backend forced, plus `extra` kernels by
    backend name (attnsel.kernels.flex_attention, an engine's own); torch's default is what
    torch._fused_sdp_choice picks for the call."""

    def __init__(self, device: str = "cuda", warmup: int = 2, target_ms: float = 5.0,
                 extra: Optional[Mapping[str, Callable[..., object]]] = None, components: Sequence[str] = (),
                 cuda_graphs: bool = False, queued: bool = True):
        from attnsel.kernels import sdpa_kernels

        self._sdpa = sdpa_kernels()
        super().__init__({**self._sdpa, **(extra or {})}, device, warmup, target_ms, components,
                         cuda_graphs=cuda_graphs, queued=queued)

    def torch_default(self, w: Workload, c: ShapeClass) -> str:
        from torch.nn.attention import SDPBackend

        q, k, v = self._tensors(w, c)
        try:
            idx = self.torch._fused_sdp_choice(q, k, v, None, 0.0, c.causal, enable_gqa=w.num_kv_heads != w.num_heads)
        except RuntimeError as e:
            return f"error: {str(e).splitlines()[0]}"
        return next((n for n, m in SDPBackend.__members__.items() if m.value == idx), f"<{idx}>")

    def time(self, w: Workload, c: ShapeClass, backend: str, reps: int) -> List[float]:
        """SDPA's backends are timed inside one switch setting (use_backend) for all the samples, so a
        short kernel is not measured with the per-call switching of a routed call; other kernels as
        KernelRunner times them."""
        import attnsel.torch as at

        if backend not in at._BACKENDS or self.kernels.get(backend) is not self._sdpa.get(backend):
            return super().time(w, c, backend, reps)
        sdpa = at._TORCH_SDPA

        def raw(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa):
            return sdpa(q, k, v, is_causal=is_causal, enable_gqa=enable_gqa)

        return self._samples(w, c, backend, reps, raw, at.use_backend(backend))
