# SPDX-License-Identifier: Apache-2.0
# SGLang's attention flags <-> attnsel's `sglang` catalog (docs/engines/sglang.md).
"""SGLang's attention-backend vocabulary for the built-in ``sglang`` catalog.

attnsel's names are SGLang's upper-cased, except that an MLA model's fa3 / flashinfer / triton / aiter
are FA3_MLA, FLASHINFER_MLA, TRITON_MLA and AITER_MLA (an attnsel backend has one attention mode).

    flags(sel)                          # ['--attention-backend', 'fa3']
    flags(decode=sel_d, prefill=sel_p)  # ['--prefill-attention-backend', 'fa4', '--decode-attention-backend', 'trtllm_mla']
    parse_flags("--attention-backend fa3 --decode-attention-backend flashinfer").for_phase("decode")  # 'FLASHINFER'
    parse_flags("--decode-attention-backend cutedsl_mla", mode="mla").prefill                         # 'TRTLLM_MLA'
    parse_flags("--linear-attn-backend triton").linear                                                # 'TRITON_LINEAR'
    flags(linear="FLASHINFER_MAMBA2")                                                                 # ['--mamba-backend', 'flashinfer']
    flags(linear="TRITON_LINEAR", linear_prefill="FLASHINFER_LINEAR")  # [..., '--linear-attn-prefill-backend', 'flashinfer']

Linear layers (attnsel's ``linear`` domain) have two flags: --linear-attn-backend for gated delta-rule
layers (GDN, KDA) and --mamba-backend for mamba layers. Where a name is also a decoder backend's, attnsel
names the kernel with a suffix: triton -> TRITON_LINEAR (GDN/KDA), TRITON_MAMBA2, TRITON_MAMBA1. Gated
delta-rule layers also have a flag per phase (--linear-attn-prefill-backend, --linear-attn-decode-backend),
which inherits --linear-attn-backend when unset: attnsel's per-phase linear overrides
(OverrideSet(linear_prefill=, linear_decode=)).
"""

import functools
import json
from typing import Dict, FrozenSet, List, Optional, Sequence, Union

from .._attnsel import builtin_catalog, to_json
from . import EngineOverrides, _block_size, _check_domain, _scan

__all__ = ["ATTENTION_BACKEND_FLAG", "DECODE_FLAG", "DRAFT_FLAG", "ENCODER_FLAG", "KV_CACHE_DTYPE_FLAG", "LINEAR_FLAG",
           "LINEAR_DECODE_FLAG", "LINEAR_PREFILL_FLAG", "MAMBA_FLAG", "PREFILL_FLAG", "decoder_names", "encoder_names", "flags", "linear_names", "parse_flags", "to_attnsel",
           "to_sglang"]

ATTENTION_BACKEND_FLAG = "--attention-backend"
PREFILL_FLAG = "--prefill-attention-backend"
DECODE_FLAG = "--decode-attention-backend"
ENCODER_FLAG = "--mm-attention-backend"
KV_CACHE_DTYPE_FLAG = "--kv-cache-dtype"
DRAFT_FLAG = "--speculative-draft-attention-backend"
LINEAR_FLAG = "--linear-attn-backend"
LINEAR_PREFILL_FLAG = "--linear-attn-prefill-backend"
LINEAR_DECODE_FLAG = "--linear-attn-decode-backend"
MAMBA_FLAG = "--mamba-backend"

# SGLang names that serve both MHA and MLA models; attnsel names the MLA flavour with an _MLA suffix.
_MLA_FLAVOURED = ("fa3", "flashinfer", "triton", "aiter", "intel_amx", "torch_native")
# Encoder-only names (VisionAttention's backends, --mm-attention-backend); fa3 / fa4 serve both domains.
_ENCODER_ONLY = ("triton_attn", "sdpa", "aiter_attn", "amx_attn", "xpu_attn", "flashinfer_cudnn")
_BOTH_DOMAINS = ("fa3", "fa4")
# Linear-layer kinds with a flag, the flag, and the suffix attnsel gives a name the decoder also has.
_LINEAR_FLAGS = {"gated_delta": (LINEAR_FLAG, "_LINEAR"), "mamba2": (MAMBA_FLAG, "_MAMBA2"), "mamba1": (MAMBA_FLAG, "_MAMBA1")}
_LINEAR_SUFFIXES = tuple(suffix.lower() for _, suffix in _LINEAR_FLAGS.values())


@functools.lru_cache(maxsize=None)
def decoder_names() -> FrozenSet[str]:
    """SGLang's spellings for --attention-backend and the per-phase flags, of the sglang catalog's
    backends and their aliases (SGLang's deprecated spellings: 'nsa' for dsa, 'tokenspeed_mla' for
    cutedsl_mla). SGLang's argparse choices are case-sensitive: 'fa3', never 'FA3'."""
    return frozenset(to_sglang(b) for b in _domain_backends("decoder")) - frozenset(_ENCODER_ONLY)


def _backends_of(doc: Dict) -> tuple:
    """A catalog document's backends (attnsel.to_json of a registry): (name, aliases, domains, mode) each."""
    return tuple((b["name"], tuple(b.get("aliases", ())), tuple(b["domains"]), b.get("mode", "standard"))
                 for b in doc["backends"])


def _linear_by_mode(backends: tuple) -> Dict[str, FrozenSet[str]]:
    """attnsel's names of the linear-domain backends among `backends` (_backends_of), by attention mode."""
    out: Dict[str, FrozenSet[str]] = {}
    for name, _, domains, mode in backends:
        if "linear" in domains:
            out[mode] = out.get(mode, frozenset()) | {name}
    return out


@functools.lru_cache(maxsize=None)
def _catalog_backends() -> tuple:
    """The sglang catalog's backends: (name, aliases, domains, mode) each."""
    return _backends_of(json.loads(to_json(builtin_catalog("sglang"))))


def _domain_backends(domain: str) -> FrozenSet[str]:
    """attnsel's names and aliases of the sglang catalog's backends that serve `domain`."""
    return frozenset(n for name, aliases, domains, _ in _catalog_backends() if domain in domains
                     for n in (name,) + aliases)


@functools.lru_cache(maxsize=None)
def _linear_backends() -> Dict[str, FrozenSet[str]]:
    """attnsel's names of the sglang catalog's linear-domain backends, by attention mode."""
    return _linear_by_mode(_catalog_backends())


def linear_names(mode: str = "gated_delta") -> FrozenSet[str]:
    """SGLang's spellings for the flag of `mode`'s layers: --linear-attn-backend for 'gated_delta' (GDN and
    KDA), --mamba-backend for 'mamba2' and 'mamba1'; lightning and short-conv layers have no flag."""
    if mode not in _LINEAR_FLAGS:
        raise ValueError(f"mode: {mode!r} is not one of {', '.join(_LINEAR_FLAGS)} (the linear kinds SGLang has a flag for)")
    return frozenset(to_sglang(b) for b in _linear_backends().get(mode, frozenset()))


def encoder_names() -> FrozenSet[str]:
    """SGLang's spellings for --mm-attention-backend, of the sglang catalog's backends."""
    serving = frozenset(to_sglang(b) for b in _domain_backends("encoder"))
    return frozenset(_ENCODER_ONLY + _BOTH_DOMAINS) & serving


def _checked(name: str, where: str, accepted: FrozenSet[str]) -> str:
    if name not in accepted:
        grammar = ""
        if "," in name or name.strip().startswith("-"):
            grammar = " SGLang takes exactly one name, not attnsel's override list (A,B / -A,auto);"
        elif where in (LINEAR_FLAG, MAMBA_FLAG):
            other = MAMBA_FLAG if where == LINEAR_FLAG else LINEAR_FLAG
            if name in linear_names("mamba2" if other == MAMBA_FLAG else "gated_delta"):
                grammar = f" a kernel of the other linear-layer flag ({other});"
            elif name in decoder_names():
                grammar = " an attention backend (--attention-backend), not a linear-layer kernel;"
        elif name in encoder_names() or name in decoder_names():
            grammar = (" a multimodal-encoder backend (--mm-attention-backend);" if name in encoder_names()
                       else " a decoder backend, not one for the multimodal encoder;")
        shown = repr(name) if len(name) <= 80 else repr(name[:77] + "...")
        raise ValueError(f"{where}: {shown} is not an SGLang backend of the sglang catalog, so SGLang refuses it "
                         f"or attnsel cannot ask about it;{grammar} accepted: {', '.join(sorted(accepted))}")
    return name

Backend = Union[str, object]  # a backend name, or an attnsel.Selection (its .backend)


def _name(backend: Backend) -> str:
    name = getattr(backend, "backend", backend)
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected a backend name or an attnsel.Selection, got {backend!r}")
    return name


def to_sglang(backend: Backend) -> str:
    """SGLang's spelling of an attnsel backend of the sglang catalog: FA3_MLA -> 'fa3', TRTLLM_MHA -> 'trtllm_mha'."""
    name = _name(backend).lower()
    if name.endswith("_mla") and name[: -len("_mla")] in _MLA_FLAVOURED:
        name = name[: -len("_mla")]
    if name.upper() in _domain_backends("linear"):
        for suffix in _LINEAR_SUFFIXES:
            if name.endswith(suffix):
                return name[: -len(suffix)]
    return name


def to_attnsel(name: str, *, mode: str = "standard", domain: str = "decoder") -> str:
    """attnsel's name for an SGLang backend spelling: ('fa3', mode='mla') -> 'FA3_MLA'.

    `mode` is the model's attention mode ('standard', 'mla' or 'sparse_mla'); `domain` 'encoder' is for
    --mm-attention-backend values; `domain` 'linear' with `mode` 'gated_delta', 'mamba2' or 'mamba1' is for
    --linear-attn-backend / --mamba-backend values (('triton', mode='mamba2', domain='linear') -> 'TRITON_MAMBA2').
    """
    if domain not in ("decoder", "encoder", "linear"):
        raise ValueError(f"domain: {domain!r} is not one of decoder, encoder, linear")
    key = name.strip().lower()
    if domain == "linear":
        if mode not in _LINEAR_FLAGS:
            raise ValueError(f"mode: {mode!r} is not one of {', '.join(_LINEAR_FLAGS)}")
        if not key:
            raise ValueError("backend name is empty")
        suffixed = key.upper() + _LINEAR_FLAGS[mode][1]
        return suffixed if suffixed in _linear_backends().get(mode, frozenset()) else key.upper()
    if mode not in ("standard", "mla", "sparse_mla"):
        raise ValueError(f"mode: {mode!r} is not one of standard, mla, sparse_mla")
    if not key:
        raise ValueError("backend name is empty")
    if domain == "decoder" and mode != "standard" and key in _MLA_FLAVOURED:
        return key.upper() + "_MLA"
    return key.upper()


def flags(
    backend: Optional[Backend] = None,
    *,
    prefill: Optional[Backend] = None,
    decode: Optional[Backend] = None,
    encoder: Optional[Backend] = None,
    page_size: Optional[int] = None,
    linear: Optional[Backend] = None,
    drafter: Optional[Backend] = None,
    linear_prefill: Optional[Backend] = None,
    linear_decode: Optional[Backend] = None,
) -> List[str]:
    """SGLang command-line flags that run the given backends.

    `backend` sets --attention-backend (both phases); `prefill` / `decode` set the per-phase flags, which
    SGLang lets inherit --attention-backend when unset; `encoder` sets --mm-attention-backend (a Selection
    made for the encoder domain goes there only: passed as another flag it is a ValueError, as is a
    decoder Selection passed as `encoder`);
    `page_size` (e.g. ``sel.block_size_for(0)``) adds --page-size; `linear` (a linear-domain backend)
    sets --linear-attn-backend or, for a mamba kernel, --mamba-backend: the base flag, so SGLang runs it in
    every phase it has no other default for (a selection made for one phase may differ in the other); `drafter` sets
    --speculative-draft-attention-backend (the draft model's backend; unset, it inherits the decoder's);
    `linear_prefill` / `linear_decode` set --linear-attn-prefill-backend / --linear-attn-decode-backend, which
    SGLang has for gated delta-rule (GDN, KDA) kernels alone: a mamba kernel there is a ValueError.
    """
    out: List[str] = []
    if (backend is not None and prefill is not None and decode is not None and to_sglang(backend) == "cutedsl_mla"
            and to_sglang(prefill) == to_sglang(decode) == "trtllm_mla"):
        # Written out, a prefill equal to the decode flag would become the base too
        # (_attention_backend_default); left unset, SGLang fills the same prefill (_cutedsl_prefill_backend_fill).
        prefill = None
    for flag, value in ((ATTENTION_BACKEND_FLAG, backend), (PREFILL_FLAG, prefill), (DECODE_FLAG, decode),
                        (DRAFT_FLAG, drafter)):
        if value is not None:
            _check_domain(value, flag, encoder=False, encoder_flag=ENCODER_FLAG)
            if _name(value).upper() in _domain_backends("linear") - _domain_backends("decoder"):
                raise ValueError(f"{flag}: {_name(value)} is a linear-layer kernel: pass it as linear=")
            name = to_sglang(value)
            if name in _ENCODER_ONLY:
                raise ValueError(f"{flag}: {_name(value)} is a multimodal-encoder backend: pass it as encoder=")
            out += [flag, _checked(name, flag, decoder_names())]
    if encoder is not None:
        _check_domain(encoder, ENCODER_FLAG, encoder=True, encoder_flag=ENCODER_FLAG)
        out += [ENCODER_FLAG, _checked(to_sglang(encoder), ENCODER_FLAG, encoder_names())]
    size = _block_size(page_size, "page_size")
    if size:
        out += ["--page-size", str(size)]
    if linear is not None:
        name = _name(linear)
        mode = next((m for m, names in _linear_backends().items() if name.upper() in names), None)
        if mode not in _LINEAR_FLAGS:
            kinds = ", ".join(sorted(n for m in _LINEAR_FLAGS for n in _linear_backends().get(m, ())))
            raise ValueError(f"linear: {name!r:.80} is not a linear-layer kernel SGLang has a flag for; accepted: {kinds}")
        out += [_LINEAR_FLAGS[mode][0], to_sglang(name)]
    for flag, value in ((LINEAR_PREFILL_FLAG, linear_prefill), (LINEAR_DECODE_FLAG, linear_decode)):
        if value is not None:
            name = _name(value)
            if name.upper() not in _linear_backends().get("gated_delta", frozenset()):
                kinds = ", ".join(sorted(_linear_backends().get("gated_delta", frozenset())))
                raise ValueError(f"{flag}: {name!r:.80} is not a gated delta-rule (GDN/KDA) kernel, the only kind "
                                 f"SGLang has per-phase flags for; accepted: {kinds}")
            out += [flag, to_sglang(name)]
    return out


def parse_flags(args: Union[str, Sequence[str]], *, mode: str = "standard",
                linear_mode: str = "gated_delta") -> EngineOverrides:
    """The attention flags of an SGLang command line (a string or an argv list) in attnsel's names,
    resolved as SGLang resolves them.

    `mode` is the model's attention mode, so 'fa3' on an MLA model reads as FA3_MLA. Other flags are
    ignored, except --kv-cache-dtype. An unset --prefill/--decode-attention-backend inherits
    --attention-backend (EngineOverrides.for_phase), as in SGLang's attention_backends_of. SGLang's
    own rewrites of the explicit flags (arg_groups/overrides.py@003bbaf9) are applied, in its order:

    - prefill and decode given and equal: that backend becomes the base (_attention_backend_default);
    - cutedsl_mla anywhere and no prefill backend: prefill is trtllm_mla (_cutedsl_prefill_backend_fill);
    - --attention-backend fa3 with --kv-cache-dtype fp8_e5m2: the base is triton
      (_attention_backend_fa3_fp8_fallback; an explicit per-phase fa3 is kept, as in SGLang).

    `linear_mode` is the kind of the model's linear layers ('gated_delta', 'mamba2', 'mamba1',
    'lightning', 'short_conv'): `.linear` reads --linear-attn-backend for gated delta-rule layers and
    --mamba-backend for mamba layers; each flag's value is checked against its own choices either way.
    `.linear_prefill` / `.linear_decode` read --linear-attn-prefill-backend / --linear-attn-decode-backend
    (gated delta-rule layers only; unset, SGLang runs --linear-attn-backend in that phase);
    --linear-attn-verify-backend (speculative verification) is not read. `.drafter` is --speculative-draft-attention-backend, checked against the
    decoder's names (SGLang's draft workers fall back from a name outside their allow-list, which the
    catalog does not model).
    """
    found = _scan(args, (ATTENTION_BACKEND_FLAG, PREFILL_FLAG, DECODE_FLAG, ENCODER_FLAG, KV_CACHE_DTYPE_FLAG,
                         LINEAR_FLAG, MAMBA_FLAG, DRAFT_FLAG, LINEAR_PREFILL_FLAG, LINEAR_DECODE_FLAG))
    kinds = ("gated_delta", "mamba2", "mamba1", "lightning", "short_conv")
    if linear_mode not in kinds:
        raise ValueError(f"linear_mode: {linear_mode!r} is not one of {', '.join(kinds)}")
    linear = None
    for kind, (flag, _) in _LINEAR_FLAGS.items():
        value = found.get(flag)
        if value is None:
            continue
        _checked(value, flag, linear_names(kind))
        if kind == linear_mode:
            linear = to_attnsel(value, mode=kind, domain="linear")
    linear_phase = {}
    for flag in (LINEAR_PREFILL_FLAG, LINEAR_DECODE_FLAG):
        value = found.get(flag)
        if value is not None:
            _checked(value, flag, linear_names("gated_delta"))
            if linear_mode == "gated_delta":
                linear_phase[flag] = to_attnsel(value, mode="gated_delta", domain="linear")

    def get(flag: str, domain: str = "decoder") -> Optional[str]:
        # Each value as SGLang's argparse reads it: exactly one of its choices.
        value = found.get(flag)
        if value is None:
            return None
        _checked(value, flag, encoder_names() if domain == "encoder" else decoder_names())
        return to_attnsel(value, mode=mode, domain=domain)

    decoder, prefill, decode = get(ATTENTION_BACKEND_FLAG), get(PREFILL_FLAG), get(DECODE_FLAG)
    if prefill is not None and prefill == decode:
        decoder = prefill
    if prefill is None and "CUTEDSL_MLA" in (decoder, decode):
        prefill = "TRTLLM_MLA"
    if decoder is not None and to_sglang(decoder) == "fa3" and found.get(KV_CACHE_DTYPE_FLAG) == "fp8_e5m2":
        decoder = to_attnsel("triton", mode=mode)
    return EngineOverrides(decoder=decoder, prefill=prefill, decode=decode, encoder=get(ENCODER_FLAG, "encoder"),
                           linear=linear, drafter=get(DRAFT_FLAG), linear_prefill=linear_phase.get(LINEAR_PREFILL_FLAG),
                           linear_decode=linear_phase.get(LINEAR_DECODE_FLAG))
