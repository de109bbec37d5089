# SPDX-License-Identifier: Apache-2.0
# attnsel.torch: PyTorch SDPA calls as torch_sdpa queries, the platform read from torch, and running the choice.
"""Helpers for ``torch.nn.functional.scaled_dot_product_attention`` (SDPA).

Importable only where torch is installed (torch is never a dependency of attnsel)::

    import attnsel.torch as at
    s = at.select_sdpa(q, k, v, is_causal=True)          # Selection from the torch_sdpa catalog
    with at.use_backend(s):                                # exactly that SDPBackend, nothing else
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

The query mapping follows catalog/torch_sdpa.json (docs/torch-sdpa-sources.md): head_size = q/k last
dim, head_size_v = v last dim, attn_type decoder = is_causal, encoder_only otherwise; features dropout,
attn_mask, gqa, nested, requires_grad, deterministic.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
import re
import threading
import warnings
from typing import Any, Dict, Iterator, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from . import DTYPES, OverrideSet, Platform, Query, Registry, Selection, SelectionError, builtin_catalog, select
from .detect import PYTHON_PACKAGES, python_components, sdpa_catalog

__all__ = [
    "CALL_KEY_NATIVE",
    "PYTHON_PACKAGES",
    "cudnn_version",
    "fallbacks",
    "install",
    "installed",
    "platform",
    "python_components",
    "query_from_sdpa",
    "registry",
    "scaled_dot_product_attention",
    "select_sdpa",
    "to_sdp_backend",
    "uninstall",
    "use_backend",
]

_DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}

# The torch_sdpa catalog's backend names and the SDPBackend each stands for.
_BACKENDS = {
    "FLASH_ATTENTION": SDPBackend.FLASH_ATTENTION,
    "EFFICIENT_ATTENTION": SDPBackend.EFFICIENT_ATTENTION,
    "CUDNN_ATTENTION": SDPBackend.CUDNN_ATTENTION,
    "MATH": SDPBackend.MATH,
}

def query_from_sdpa(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: Optional[torch.Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    enable_gqa: bool = False,
    *,
    domain: str = "decoder",
) -> Query:
    """The torch_sdpa catalog's Query for one SDPA call (same arguments as F.scaled_dot_product_attention).

    Reads the tensors' dtype and head dims, the flags, grad mode (requires_grad counts only while
    grad is enabled, as in PyTorch) and torch.use_deterministic_algorithms (without warn_only); from
    dense 4-D tensors also the call's shape: batch_size, num_heads, num_kv_heads, seq_len_q, seq_len_kv.
    ValueError for a dtype outside float16/bfloat16/float32 or q/k/v of different dtypes.
    """
    dtype = _DTYPES.get(query.dtype)
    if dtype is None:
        raise ValueError(f"dtype: '{query.dtype}' is not one of {', '.join(DTYPES)}")
    if key.dtype != query.dtype or value.dtype != query.dtype:
        raise ValueError(f"dtype: query, key and value must share one dtype, got {query.dtype}, {key.dtype}, {value.dtype}")
    nested = query.is_nested or key.is_nested or value.is_nested
    features = set()
    if dropout_p > 0.0:
        features.add("dropout")
    if attn_mask is not None:
        features.add("attn_mask")
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and query.size(-3) != key.size(-3):
        features.add("gqa")
    if nested:
        features.add("nested")
    if torch.is_grad_enabled() and (query.requires_grad or key.requires_grad or value.requires_grad):
        features.add("requires_grad")
    if torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled():
        features.add("deterministic")
    if attn_mask is not None and torch.is_grad_enabled() and attn_mask.requires_grad:
        features.add("attn_mask_grad")
    if attn_mask is not None and attn_mask.dim() == 3:
        features.add("attn_mask_3d")
    head_size = query.size(-1)
    head_size_v = value.size(-1)
    # The call's shape (catalog format 2), from dense 4-D tensors (batch, heads, length, dim); nested
    # tensors have ragged lengths and leave them unstated.
    shape = {}
    if not nested and query.dim() == 4 and key.dim() == 4:
        shape = dict(batch_size=query.size(0) or None, num_heads=query.size(1) or None,
                     num_kv_heads=key.size(1) or None, seq_len_q=query.size(2) or None,
                     seq_len_kv=key.size(2) or None)
        if shape["num_heads"] and shape["num_kv_heads"] and shape["num_heads"] % shape["num_kv_heads"]:
            shape["num_kv_heads"] = None  # PyTorch refuses such GQA in every fused backend; keep the query valid
    else:
        shape = dict(num_heads=query.size(-3) if query.dim() >= 3 and not nested else None)
    return Query(
        head_size=head_size,
        head_size_v=head_size_v if head_size_v != head_size else None,
        dtype=dtype,
        attn_type="decoder" if is_causal else "encoder_only",
        domain=domain,
        features=features,
        **shape,
    )


def cudnn_version() -> Optional[str]:
    """The runtime cuDNN version as 'major.minor.patch' (91900 -> '9.19.0'), or None without cuDNN."""
    if not torch.backends.cudnn.is_available():
        return None
    v = torch.backends.cudnn.version()
    if not v:
        return None
    # cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 and older major*1000 + minor*100 + patch.
    if v >= 90000:
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"


def _cudnn_preferred(cudnn: Optional[str], major: int, minor: int) -> bool:
    # PyTorch check_prefer_cudnn_attention: runtime cuDNN > 9.15.0, TORCH_CUDNN_SDPA_DEPRIORITIZED not set
    # to 1, sm9x/sm10x, and capability minor 0 or 3: always in 2.11, only on CUDA < 13 builds from 2.14
    # (docs/torch-sdpa-sources.md).
    if cudnn is None or tuple(int(x) for x in cudnn.split(".")) <= (9, 15, 0):
        return False
    if os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED") == "1":
        return False
    if major not in (9, 10):
        return False
    cuda = torch.version.cuda
    minor_tested = sdpa_catalog(torch.__version__) == "torch_sdpa" or (cuda is not None and int(cuda.split(".")[0]) < 13)
    if minor_tested and minor not in (0, 3):
        return False
    return True


def platform(device: Union[None, str, int, torch.device] = None) -> Platform:
    """The Platform of a torch device (default: the current CUDA device, else the CPU).

    Every device: the component torch=<version> (the numeric part of torch.__version__) and
    python_components(). CUDA: capability from torch.cuda.get_device_capability(), components
    cudnn=<runtime version>, cudnn_preferred when PyTorch would put cuDNN first, and the device name
    (torch.cuda.get_device_name). ROCm builds give Platform.rocm(gcnArchName). Built from what torch reports about `device`; attnsel.detect_platform()
    detects the machine itself (driver, cuDNN, switches) with a source for every fact.
    """
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    elif isinstance(device, int):
        device = torch.device("cuda", device)
    else:
        device = torch.device(device)
    components: Dict[str, Optional[str]] = python_components()
    torch_version = re.match(r"\d+(\.\d+){0,3}", torch.__version__)
    if torch_version:
        components["torch"] = torch_version.group(0)
    if device.type == "cpu":
        return Platform.cpu(components=components)
    if device.type == "xpu":
        return Platform.xpu(components=components)
    if device.type != "cuda":
        raise ValueError(f"device: '{device.type}' is not one of cpu, cuda, xpu")
    if getattr(torch.version, "hip", None):
        arch = torch.cuda.get_device_properties(device).gcnArchName.split(":")[0]
        return Platform.rocm(arch, components=components).with_device_name(torch.cuda.get_device_name(device))
    major, minor = torch.cuda.get_device_capability(device)
    cudnn = cudnn_version()
    if cudnn is not None:
        components["cudnn"] = cudnn
        if _cudnn_preferred(cudnn, major, minor):
            components["cudnn_preferred"] = None
    return Platform.cuda(major, minor, components=components).with_device_name(torch.cuda.get_device_name(device))


@functools.lru_cache(maxsize=None)
def registry() -> Registry:
    """The catalog of the installed PyTorch's SDPA (detect.sdpa_catalog: torch_sdpa@2.14.0 from 2.14 on, else
    torch_sdpa), loaded once per process."""
    return builtin_catalog(sdpa_catalog(torch.__version__))


_torch_registry = registry  # for install(), whose parameter is named registry


@functools.lru_cache(maxsize=64)
def _platform_of(device_type: str, index: Optional[int]) -> Platform:
    return platform(torch.device(device_type, index) if index is not None else torch.device(device_type))


def select_sdpa(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: Optional[torch.Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    enable_gqa: bool = False,
    *,
    registry: Optional[Registry] = None,
    platform: Optional[Platform] = None,
    override: Union[None, str, OverrideSet] = None,
    prefer: bool = False,
) -> Selection:
    """Selects the SDPA backend for this call (torch_sdpa catalog, the tensors' device unless `platform`).

    The device's Platform is cached per device, and each answer per call description (the tensors'
    shapes, dtypes and grad flags, the mask's rank, grad flag and dtype, the flags, grad and
    determinism modes, the device, the registry, platform and override): a repeated call costs the key
    and one dict look-up. Calls with nested tensors are answered afresh. SelectionError when nothing
    fits (errors are not cached).
    """
    # The call's description: read in C++ where attnsel._torch_call is built for this torch (bytes), else
    # through Python attributes (a tuple). Nested tensors have no key: those calls are answered afresh.
    call = None if _call_key is None else _call_key(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    if call is None:
        call = _python_call_key(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    if call is not None:
        if registry is not None or platform is not None or override is not None or prefer:
            # The registry by its generation, which Registry.merge changes and no other registry of the
            # process ever has (its id() stays the same across a merge, and a collected one's id is
            # reused); the platform, immutable, by identity: the entry holds a reference to it, so its
            # id is not reused while the entry lives.
            call = (call, None if registry is None else registry.generation, id(platform), override, prefer)
        hit = _answers.get(call)
        if hit is not None:
            return hit[0]
    q = query_from_sdpa(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    platform_used = platform if platform is not None else _platform_of(query.device.type, query.device.index)
    reg = registry if registry is not None else _registry()
    answer = select(reg, q, platform_used, override, prefer=prefer)
    if call is not None:
        if len(_answers) >= _ANSWERS_LIMIT:
            _answers.clear()  # bounded: a workload of ever-new shapes starts over rather than grow
        _answers[call] = (answer, platform)
    return answer


# select_sdpa's answers by call description (see its docstring); at most _ANSWERS_LIMIT entries.
_answers: dict = {}
_ANSWERS_LIMIT = 4096


_registry = registry  # select_sdpa's `registry` argument shadows the function


def _python_call_key(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa) -> Optional[tuple]:
    # The same description as attnsel._torch_call.call_key, read through Python: each tensor's nested flag,
    # shape, dtype and grad flag in one C call (attrgetter), the mask's rank, grad flag and dtype, grad and
    # determinism modes, the flags and the device. None for nested tensors.
    try:
        mq, mk, mv = _tensor_key(query), _tensor_key(key), _tensor_key(value)
    except RuntimeError:  # a strided nested tensor has no shape
        return None
    if mq[0] or mk[0] or mv[0]:
        return None
    mask = None if attn_mask is None else (attn_mask.dim(), attn_mask.requires_grad, attn_mask.dtype)
    deterministic = _deterministic() and not _deterministic_warn_only()  # as query_from_sdpa reads it
    return (mq, mk, mv, _is_grad_enabled(), mask, deterministic, dropout_p > 0.0, bool(is_causal), bool(enable_gqa),
            query.device)


# The C functions behind torch.is_grad_enabled and torch.are_deterministic_algorithms_enabled /
# is_deterministic_algorithms_warn_only_enabled (where those are Python wrappers: a frame each per call).
_tensor_key = operator.attrgetter("is_nested", "shape", "dtype", "requires_grad")
_is_grad_enabled = torch.is_grad_enabled
_deterministic = getattr(torch._C, "_get_deterministic_algorithms", torch.are_deterministic_algorithms_enabled)
_deterministic_warn_only = getattr(torch._C, "_get_deterministic_algorithms_warn_only",
                                   torch.is_deterministic_algorithms_warn_only_enabled)


def _load_call_key() -> tuple:
    # attnsel._torch_call where it is built and loads into this torch; else None and why.
    try:
        from . import _torch_call  # type: ignore[attr-defined]
    except ImportError as e:  # not built (no torch at build time), or built against another torch
        return None, str(e)
    return _torch_call.call_key, None


# select_sdpa's call key in C++, or None; CALL_KEY_NATIVE says which one runs, _call_key_missing why not.
_call_key, _call_key_missing = _load_call_key()
CALL_KEY_NATIVE: bool = _call_key is not None


def to_sdp_backend(selection: Union[Selection, str]) -> SDPBackend:
    """The torch.nn.attention.SDPBackend of a torch_sdpa selection (or backend name)."""
    name = selection if isinstance(selection, str) else selection.backend
    backend = _BACKENDS.get(name.upper())
    if backend is None:
        raise ValueError(f"backend: '{name}' is not one of {', '.join(_BACKENDS)}")
    return backend


@contextlib.contextmanager
def use_backend(selection: Union[Selection, str]) -> Iterator[SDPBackend]:
    """Runs scaled_dot_product_attention inside with exactly the chosen backend (sdpa_kernel allow-list
    of one): PyTorch raises rather than silently using another kernel if it cannot run it."""
    backend = to_sdp_backend(selection)
    with sdpa_kernel([backend]):
        yield backend


# ---- running the choice ---------------------------------------------------------------------------------
# use_backend is torch's sdpa_kernel: a generator context manager that reads and writes torch's SDPA
# switches through Python wrappers (tens of microseconds a call in eager). The routed calls below write the
# same switches through the C functions directly: five reads, five writes and five restores a call.

_SWITCHES = tuple(n for n in ("flash", "mem_efficient", "math", "cudnn", "overrideable")
                  if hasattr(torch._C, f"_set_sdp_use_{n}"))
_SWITCH_OF = {"FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "mem_efficient", "CUDNN_ATTENTION": "cudnn",
              "MATH": "math"}
_GET_SWITCHES = tuple(getattr(torch._C, f"_get_{n}_sdp_enabled") for n in _SWITCHES)
_SET_SWITCHES = tuple(getattr(torch._C, f"_set_sdp_use_{n}") for n in _SWITCHES)
# Per backend name: the switch values that leave only that backend on.
_ONLY = {b: tuple(n == s for n in _SWITCHES) for b, s in _SWITCH_OF.items()}
_TORCH_SDPA = F.scaled_dot_product_attention  # torch's own, whatever install() does to the attribute
_sdpa = _TORCH_SDPA  # what the routing calls to run the kernel


class _SwitchedOff(Exception):
    """The chosen backend's switch was off when the call came (the caller's sdpa_kernel or
    torch.backends.cuda.enable_*_sdp): the caller's restriction wins."""


# One routed call at a time sets and restores the switches: two threads interleaving would restore each
# other's forced state and leave the process with one backend on.
_switch_lock = threading.Lock()


def _forcing(only: tuple):
    """The runner that calls SDPA with the switches set to `only` and restores them, unrolled for torch's
    five switches (the hot path of every routed call: a loop over them costs about a microsecond more).
    Raises _SwitchedOff, touching nothing, when the caller has the chosen backend's switch off."""
    chosen = only.index(True)
    if len(_SWITCHES) != 5:  # an older torch: the same, looped
        def run(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
            with _switch_lock:
                before = [get() for get in _GET_SWITCHES]
                if not before[chosen]:
                    raise _SwitchedOff
                try:
                    for put, on in zip(_SET_SWITCHES, only):
                        put(on)
                    return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                 enable_gqa=enable_gqa)
                finally:
                    for put, on in zip(_SET_SWITCHES, before):
                        put(on)
        return run
    g1, g2, g3, g4, g5 = _GET_SWITCHES
    s1, s2, s3, s4, s5 = _SET_SWITCHES
    o1, o2, o3, o4, o5 = only

    def run(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
        with _switch_lock:
            before = b1, b2, b3, b4, b5 = g1(), g2(), g3(), g4(), g5()
            if not before[chosen]:
                raise _SwitchedOff
            try:
                s1(o1), s2(o2), s3(o3), s4(o4), s5(o5)
                return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
            finally:
                s1(b1), s2(b2), s3(b3), s4(b4), s5(b5)
    return run


_RUNNERS = {b: _forcing(only) for b, only in _ONLY.items()}


def _run_only(backend: str, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    # Exactly `backend` (PyTorch raises rather than run another), the switches restored afterwards. The
    # caller's own restriction wins: a backend it switched off is not switched back on (RuntimeError).
    run = _RUNNERS.get(backend)
    if run is None:
        to_sdp_backend(backend)  # the ValueError naming the backends
    try:
        return run(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    except _SwitchedOff:
        raise RuntimeError(f"attnsel.torch: {backend} is switched off here (sdpa_kernel or "
                           f"torch.backends.cuda.enable_*_sdp); it is not switched back on") from None


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: Optional[torch.Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    enable_gqa: bool = False,
    **select_kwargs: Any,
) -> torch.Tensor:
    """F.scaled_dot_product_attention run with the backend attnsel selects (select_sdpa's keywords apply):
    exactly that backend, as use_backend runs it, with torch's switches written directly (no sdpa_kernel)."""
    selection = select_sdpa(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa, **select_kwargs)
    return _run_only(selection.backend, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


# ---- install(): every F.scaled_dot_product_attention call, eager and compiled ---------------------------

# install(registry=..., kernels=...): the catalog routed calls select from (None: registry()) and the
# kernels of backends beyond SDPA's, by name. One tuple, replaced whole and read once a call, so a call
# never pairs one install's registry with another's kernels.
_route: Tuple[Optional[Registry], Dict[str, Any]] = (None, {})
_fallbacks: Dict[str, int] = {}  # why a routed call ran torch's own choice -> how often


def _fallback(why: str) -> None:
    if why not in _fallbacks:
        if len(_fallbacks) >= 64:
            why = "other reasons"
        warnings.warn(f"attnsel.torch: a routed SDPA call runs torch's own choice: {why}", RuntimeWarning,
                      stacklevel=4)
    _fallbacks[why] = _fallbacks.get(why, 0) + 1


def _routed_eager(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    registry_, kernels = _route
    try:
        selection = select_sdpa(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa, registry=registry_)
    except (ValueError, SelectionError) as e:  # a call attnsel cannot describe, or no backend fits
        _fallback(str(e).splitlines()[0])
        return _sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                     enable_gqa=enable_gqa)
    run = _RUNNERS.get(selection.backend)
    if run is None:
        return _run_given(kernels.get(selection.backend), selection.backend, query, key, value, attn_mask, dropout_p,
                          is_causal, scale, enable_gqa)
    try:
        return run(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    except _SwitchedOff:
        _fallback(f"{selection.backend} is switched off by the caller (sdpa_kernel or enable_*_sdp)")
    except RuntimeError as e:  # the kernel refused a call the catalog let through (a shape it does not state)
        _fallback(f"{selection.backend} refused the call: {str(e).splitlines()[0][:120]}")
    return _sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                 enable_gqa=enable_gqa)


def _run_given(kernel, backend, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """A kernel given to install(kernels=...): its output must be the call's (a tensor of the query's dtype
    and device, SDPA's output shape), else the call runs torch's own choice, as when it raises."""
    if kernel is None:
        _fallback(f"{backend} has no kernel here (install(kernels=...) gives one)")
    else:
        try:
            out = kernel(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        except Exception as e:  # noqa: BLE001 - any failure of a foreign kernel falls back, with its reason
            _fallback(f"{backend} refused the call: {str(e).splitlines()[0][:120] if str(e) else type(e).__name__}")
        else:
            if (isinstance(out, torch.Tensor) and out.dtype == query.dtype and out.device == query.device
                    and out.shape[:-1] == query.shape[:-1] and out.shape[-1] == value.shape[-1]):
                return out
            _fallback(f"{backend} returned {getattr(out, 'shape', type(out).__name__)} "
                      f"{getattr(out, 'dtype', '')}, not the call's output")
    return _sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                 enable_gqa=enable_gqa)


# Under torch.compile the choice runs inside this operator, opaque to the tracer: no graph break, and the
# call selects at run time from the real tensors. Its output has the layout of the fused kernels' output
# (batch, length, heads, dim viewed as batch, heads, length, dim) so that the compiler's view of the strides
# is what runs.
@torch.library.custom_op("attnsel::sdpa", mutates_args=())
def _sdpa_op(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: Optional[torch.Tensor],
             dropout_p: float, is_causal: bool, scale: Optional[float], enable_gqa: bool) -> torch.Tensor:
    out = _routed_eager(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if out.dim() == 4:
        return out.transpose(1, 2).contiguous().transpose(1, 2)  # free when the kernel wrote that layout
    return out.contiguous()


@_sdpa_op.register_fake
def _sdpa_op_fake(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    b, h, n, _ = query.shape  # _routed sends only dense 4-D calls of one batch here
    return query.new_empty((b, n, h, value.shape[-1])).transpose(1, 2)


def _routed(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    # install()'s F.scaled_dot_product_attention. Compiled, the operator takes dense 4-D calls of one batch;
    # training (a tensor or mask that needs grad) and any other call keep torch's own traced call (the
    # operator has no backward).
    if torch.compiler.is_compiling():
        grad = torch.is_grad_enabled() and (query.requires_grad or key.requires_grad or value.requires_grad or (
            attn_mask is not None and attn_mask.requires_grad))
        if grad or query.dim() != 4 or key.dim() != 4 or query.shape[0] != key.shape[0]:
            return _sdpa(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                         scale=scale, enable_gqa=enable_gqa)
        return _sdpa_op(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    return _routed_eager(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _set_route(registry: Optional[Registry], kernels: Optional[Dict[str, Any]]) -> None:
    """The registry routed calls select from and the kernels of backends beyond SDPA's (install's and
    attnsel.transformers.use_registry's arguments), checked: nothing changes when one is refused."""
    global _route
    if registry is not None and not isinstance(registry, Registry):
        raise TypeError(f"registry: expected attnsel.Registry, got {type(registry).__name__}")
    given = dict(kernels or {})
    sdpa_catalog_ = _torch_registry()
    known = registry if registry is not None else sdpa_catalog_
    for name, run in given.items():
        if not isinstance(name, str) or not callable(run):
            raise TypeError(f"kernels: {name!r}: each entry must be a backend name mapped to a callable")
        if name in _RUNNERS or (name in sdpa_catalog_ and name not in known.backends):
            raise ValueError(f"kernels: {name} is one of SDPA's backends (or names one), which attnsel.torch runs "
                             "itself")
        if name not in known.backends:
            raise ValueError(f"kernels: {name} is not a backend of the catalog '{known.name}' routed calls select "
                             f"from (by its own name: {', '.join(known.backends)}); layer one that describes it "
                             "(attnsel.kernels.registry)")
    _route = (registry, given)


def install(registry: Optional[Registry] = None, kernels: Optional[Dict[str, Any]] = None) -> None:
    """Routes every torch.nn.functional.scaled_dot_product_attention call of the process through attnsel.

    Each call runs exactly the backend select_sdpa answers from `registry` (default: the installed torch's
    catalog, registry(); a measured overlay merged into a Registry routes by it). Eager calls write torch's
    switches directly; under torch.compile the choice runs at run time inside the operator attnsel::sdpa,
    so fullgraph=True traces without a break (compiled calls that need grad, and calls other than dense 4-D
    ones of one batch, keep torch's own choice). A call attnsel cannot describe (float64, say), where no
    backend fits, where the chosen kernel refuses the call, or whose chosen backend the caller switched off
    (sdpa_kernel, enable_*_sdp) runs torch's own choice, warned once per reason and counted in fallbacks()
    (reset by install()). Routed calls set and restore the switches one at a time (a lock).

    `kernels` maps backends beyond SDPA's to callables with SDPA's arguments taken positionally
    (attnsel.kernels: flex_attention(), eager_attention(), an engine's own): where the registry selects
    one, the call runs it (under torch.compile inside the operator, at run time). Each name must be a
    backend of the registry; SDPA's own four are not replaced. A selected backend without a kernel, or
    whose kernel raises, falls back as above. Calling install again replaces the registry and the
    kernels; uninstall() restores torch's function.
    """
    _set_route(registry, kernels)
    _fallbacks.clear()
    F.scaled_dot_product_attention = _routed


def uninstall() -> None:
    """Restores torch's own F.scaled_dot_product_attention (a no-op when install() was not called)."""
    global _route
    F.scaled_dot_product_attention = _TORCH_SDPA
    _route = (None, {})


def installed() -> bool:
    """Whether F.scaled_dot_product_attention is attnsel's routed function."""
    return F.scaled_dot_product_attention is _routed


def fallbacks() -> Dict[str, int]:
    """Why routed calls ran torch's own choice since install(), and how often (a copy)."""
    return dict(_fallbacks)
