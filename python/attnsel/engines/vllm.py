# SPDX-License-Identifier: Apache-2.0
# vLLM's attention flags <-> attnsel's `vllm` catalog (docs/engines/vllm.md).
"""vLLM's attention-backend vocabulary for the built-in ``vllm`` catalog.

attnsel's names are vLLM's own (AttentionBackendEnum: FLASH_ATTN, FLASHINFER_MLA, ...), except for the
MLA prefill backends, which vLLM names in a separate enum (MLAPrefillBackendEnum: FLASH_ATTN, FLASHINFER,
TRTLLM_RAGGED, TOKENSPEED_MLA) and attnsel as MLA_PREFILL_FLASH_ATTN, ... (see :func:`to_mla_prefill`):

    flags(sel)                           # ['--attention-backend', 'FLASH_ATTN']
    flags(encoder=vit_sel)               # ['--mm-encoder-attn-backend', 'TORCH_SDPA']
    flags(mla_prefill="MLA_PREFILL_TRTLLM_RAGGED")  # ['--attention-config', '{"mla_prefill_backend": "TRTLLM_RAGGED"}']
    o = parse_flags("--attention-config '{\"backend_per_kind\": {\"sliding_window\": \"TRITON_ATTN\"}}'")
    o.override_set(query=q)              # the override vLLM applies to that layer
"""

import dataclasses
import functools
import json
import warnings
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Union

from .._attnsel import OverrideSet, builtin_catalog, to_json
from . import EngineOverrides, _block_size, _check_domain, _json_object, _split

__all__ = [
    "ATTENTION_BACKEND_FLAG",
    "ATTENTION_CONFIG_FLAG",
    "DECODE_FLAG",
    "ENCODER_FLAG",
    "KV_CACHE_KINDS",
    "VllmOverrides",
    "backend_names",
    "flags",
    "kv_cache_kind",
    "mla_prefill_names",
    "mla_prefill_query",
    "parse_flags",
    "to_mla_prefill",
    "to_vllm_mla_prefill",
]

ATTENTION_BACKEND_FLAG = "--attention-backend"
# vLLM PR #48162 (not in a release: vLLM 0.33.0's parser refuses both): the decode-phase backend, and
# --attention-prefill-backend as an alias of --attention-backend. parse_flags reads them with a warning;
# flags() never writes them.
RELEASE = "0.33.0"
DECODE_FLAG = "--attention-decode-backend"
PREFILL_ALIAS_FLAG = "--attention-prefill-backend"
ENCODER_FLAG = "--mm-encoder-attn-backend"
ATTENTION_CONFIG_FLAG = "--attention-config"
_ATTENTION_CONFIG_SHORT = "-ac"
# Older vLLM releases read the decoder backend from this environment variable instead; vLLM PR #50292
# removed it (read with a warning that says so).
ENV_VAR = "VLLM_ATTENTION_BACKEND"

# KVCacheSpecKind values (vllm/v1/kv_cache_interface.py): the keys of attention_config.backend_per_kind.
KV_CACHE_KINDS = (
    "full_attention",
    "sliding_window",
    "mla_attention",
    "sliding_window_mla",
    "cross_attention",
    "encoder_only_attention",
    "sink_full_attention",
    "chunked_local_attention",
    "mamba",
)

# MLAPrefillBackendEnum names that are not "MLA_PREFILL_" + the vLLM name.
_MLA_PREFILL_SPECIAL = {"TOKENSPEED_MLA": "MLA_PREFILL_TOKENSPEED"}
_MLA_PREFILL_PREFIX = "MLA_PREFILL_"

Backend = Union[str, object]


def _name(backend: Backend) -> str:
    name = getattr(backend, "backend", backend)
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected a backend name or an attnsel.Selection, got {backend!r}")
    return name.upper()


@functools.lru_cache(maxsize=None)
def backend_names() -> FrozenSet[str]:
    """The AttentionBackendEnum names vLLM's backend flags accept: the vllm catalog's backends but the
    MLA prefill ones (a separate enum, :func:`mla_prefill_names`) and the linear-attention ones (vLLM's
    MambaAttentionBackendEnum, which it picks by layer type: no flag takes them)."""
    doc = json.loads(to_json(builtin_catalog("vllm")))
    return frozenset(b["name"] for b in doc["backends"]
                     if not b["name"].startswith(_MLA_PREFILL_PREFIX) and set(b["domains"]) - {"linear"})


@functools.lru_cache(maxsize=None)
def mla_prefill_names() -> FrozenSet[str]:
    """The MLAPrefillBackendEnum names attention_config.mla_prefill_backend accepts (vLLM's spelling)."""
    return frozenset(to_vllm_mla_prefill(b) for b in builtin_catalog("vllm").backends
                     if b.startswith(_MLA_PREFILL_PREFIX))


def _refuse(where: str, value: object, accepted: FrozenSet[str], what: str) -> ValueError:
    shown = repr(value) if not isinstance(value, str) or len(value) <= 80 else repr(value[:77] + "...")
    grammar = ""
    if isinstance(value, str) and ("," in value or value.strip().startswith("-")):
        grammar = " vLLM takes exactly one name, not attnsel's override list (A,B / -A,auto);"
    return ValueError(f"{where}: {shown} is not {what}, so vLLM refuses it;{grammar} accepted: "
                      f"{', '.join(sorted(accepted))}")


def _vllm_name(backend: Backend, where: str) -> str:
    """An AttentionBackendEnum name vLLM accepts for `backend`; ValueError for one it refuses (a torch
    SDPA or SGLang name, an MLA prefill backend, text that is no name)."""
    name = _name(backend)
    if name not in backend_names():
        hint = " (an MLA prefill backend: pass it as mla_prefill=)" if name.startswith(_MLA_PREFILL_PREFIX) else ""
        raise _refuse(where + hint, name, backend_names(), "a vLLM AttentionBackendEnum name")
    return name


def to_mla_prefill(name: str) -> str:
    """attnsel's name for a vLLM MLAPrefillBackendEnum name: 'TRTLLM_RAGGED' -> 'MLA_PREFILL_TRTLLM_RAGGED'.

    vLLM's prefill enum reuses FLASH_ATTN and FLASHINFER, which attnsel already uses for the decoder
    backends, so every MLA prefill backend carries the MLA_PREFILL_ prefix; TOKENSPEED_MLA becomes
    MLA_PREFILL_TOKENSPEED. A name that already has the prefix is returned as it is.
    """
    key = name.strip().upper()
    if not key:
        raise ValueError("MLA prefill backend name is empty")
    if key.startswith(_MLA_PREFILL_PREFIX):
        return key
    return _MLA_PREFILL_SPECIAL.get(key, _MLA_PREFILL_PREFIX + key)


def to_vllm_mla_prefill(backend: Backend) -> str:
    """vLLM's MLAPrefillBackendEnum name for an attnsel MLA prefill backend (the inverse of to_mla_prefill)."""
    name = _name(backend)
    if not name.startswith(_MLA_PREFILL_PREFIX):
        raise ValueError(f"{name} is not an MLA prefill backend (MLA_PREFILL_...)")
    for vllm_name, ours in _MLA_PREFILL_SPECIAL.items():
        if ours == name:
            return vllm_name
    return name[len(_MLA_PREFILL_PREFIX):]


def kv_cache_kind(query) -> str:
    """The KV-cache group kind of a layer, exactly as vLLM's get_attn_spec_kind derives it.

    encoder_only -> 'encoder_only_attention'; encoder_decoder (cross-attention) -> 'cross_attention';
    MLA (dense or sparse) -> 'sliding_window_mla' with the sliding_window feature, else 'mla_attention';
    otherwise 'sliding_window' or 'full_attention'. Sinks do not change the kind (gpt-oss stays
    full/sliding); 'sink_full_attention' comes only from vLLM's StaticSinkAttention layer.
    """
    if query.attn_type == "encoder_only":
        return "encoder_only_attention"
    if query.attn_type == "encoder_decoder":
        return "cross_attention"
    sliding = "sliding_window" in query.features
    if query.mode != "standard":
        return "sliding_window_mla" if sliding else "mla_attention"
    return "sliding_window" if sliding else "full_attention"


def mla_prefill_query(config, *, tp: int = 1, **fields):
    """The query for vLLM's MLA prefill selector from a model config (a path or a dict).

    The MLA prefill backends are selected for the prefill attention's head sizes (qk_nope_head_dim +
    qk_rope_head_dim and v_head_dim; DeepSeek R1/V3: 192 and 128), not the latent 576 of the decode
    query that Query.from_model_config gives. `fields` add to the query (kv_cache_dtype=..., features=...).
    """
    from .. import Query, read_model_config  # local: the package imports this module lazily

    model = read_model_config(config)
    if model.mode == "standard":
        raise ValueError("mla_prefill_query: the model does not use MLA (no kv_lora_rank)")
    base = Query.from_model_config(config, tp=tp, **fields)
    return base.replace(head_size=model.head_size, head_size_v=model.head_size_v, phase="prefill")


@dataclasses.dataclass(frozen=True)
class VllmOverrides(EngineOverrides):
    """The attention overrides of a vLLM command line, with vLLM's own precedence (:meth:`for_query`).

    ``decoder`` is --attention-backend (attention_config.backend), ``decode`` --attention-decode-backend
    (PR #48162), ``backend_per_kind`` the (kind, backend) pairs of attention_config.backend_per_kind,
    ``mla_prefill`` attention_config.mla_prefill_backend in attnsel's name (MLA_PREFILL_...).
    """

    backend_per_kind: Tuple[Tuple[str, str], ...] = ()
    mla_prefill: Optional[str] = None

    def backend_for_kind(self, kind: str) -> Optional[str]:
        """The per-kind backend of `kind`, or None when backend_per_kind does not name it."""
        return dict(self.backend_per_kind).get(kind)

    def for_query(self, query) -> Optional[str]:
        """The backend vLLM forces for the layer and call `query` describes, or None (automatic).

        - encoder domain: --mm-encoder-attn-backend;
        - an MLA prefill call (mode mla, phase prefill): mla_prefill_backend, never the decoder backend
          (vLLM's separate MLA prefill selector);
        - a decode call with --attention-decode-backend set: that backend;
        - otherwise the per-kind backend of the layer's KV-cache kind (:func:`kv_cache_kind`), else
          --attention-backend (vLLM's get_attn_backend: ``backend_per_kind.get(kind, backend)``).
        """
        if query.domain == "encoder":
            return self.encoder
        if query.mode == "mla" and query.phase == "prefill":
            return self.mla_prefill
        if query.phase == "decode" and self.decode is not None:
            return self.decode
        own = self.backend_for_kind(kv_cache_kind(query))
        return own if own is not None else self.decoder

    def override_set(self, phase: Optional[str] = None, source: str = "api", *, query=None) -> OverrideSet:
        """The attnsel OverrideSet. With `query`, exactly vLLM's override for that layer, for its phase
        and for both phases (so attnsel.plan sees each phase's own); an automatic phase is an explicit
        empty override, never inherited. Without `query`, EngineOverrides' phase rule (no per-kind, no
        MLA prefill override: they need the layer)."""
        if query is None:
            return super().override_set(phase, source)
        decoder = self.for_query(query.replace(phase=None))
        return OverrideSet(
            decoder=decoder or "",
            encoder=self.encoder or "",
            source=source,
            prefill=self.for_query(query.replace(phase="prefill")) or "",
            decode=self.for_query(query.replace(phase="decode")) or "",
        )


def flags(
    backend: Optional[Backend] = None,
    *,
    decode: Optional[Backend] = None,
    encoder: Optional[Backend] = None,
    mla_prefill: Optional[Backend] = None,
    backend_per_kind: Optional[Mapping[str, Backend]] = None,
    block_size: Optional[int] = None,
) -> List[str]:
    """vLLM command-line flags that run the given backends, as vLLM 0.33.0's parser accepts them.

    `backend` sets --attention-backend, the backend of every phase: vLLM has no per-phase flag in a
    release, so `decode` is a ValueError that says so (--attention-decode-backend is PR #48162, which
    vLLM 0.33.0's parser refuses). `encoder` sets --mm-encoder-attn-backend (a Selection made for the
    encoder domain goes there only: given to another flag it is a ValueError, as is a decoder Selection
    given as `encoder`). `mla_prefill` (an MLA_PREFILL_... backend) and `backend_per_kind` (kind ->
    backend) go into one --attention-config JSON; `block_size` (e.g. ``sel.block_size_for(0)``) adds
    --block-size. A linear-attention backend (GDN_ATTN, MAMBA2_ATTN, ...) is a ValueError for every
    flag: vLLM picks those by layer type.
    """
    out: List[str] = []
    if backend is not None:
        _check_domain(backend, ATTENTION_BACKEND_FLAG, encoder=False, encoder_flag=ENCODER_FLAG)
        out += [ATTENTION_BACKEND_FLAG, _vllm_name(backend, ATTENTION_BACKEND_FLAG)]
    if decode is not None:
        raise ValueError(f"decode: vLLM {RELEASE} has no decode-phase backend flag ({DECODE_FLAG} is vLLM PR "
                         f"#48162, not in a release, and the parser refuses it); {ATTENTION_BACKEND_FLAG} runs "
                         "one backend in every phase")
    if encoder is not None:
        _check_domain(encoder, ENCODER_FLAG, encoder=True, encoder_flag=ENCODER_FLAG)
        out += [ENCODER_FLAG, _vllm_name(encoder, ENCODER_FLAG)]
    config: Dict[str, object] = {}
    if mla_prefill is not None:
        name = _name(mla_prefill)
        if not name.startswith(_MLA_PREFILL_PREFIX) or to_vllm_mla_prefill(name) not in mla_prefill_names():
            raise _refuse("mla_prefill", name, frozenset(to_mla_prefill(n) for n in mla_prefill_names()),
                          "an MLA prefill backend of the vllm catalog")
        config["mla_prefill_backend"] = to_vllm_mla_prefill(name)
    if backend_per_kind:
        config["backend_per_kind"] = {_kind(k): _vllm_name(v, f"backend_per_kind.{k}")
                                      for k, v in backend_per_kind.items()}
    if config:
        out += [ATTENTION_CONFIG_FLAG, json.dumps(config)]
    size = _block_size(block_size, "block_size")
    if size:
        out += ["--block-size", str(size)]
    return out


def _kind(kind: str) -> str:
    if kind not in KV_CACHE_KINDS:
        raise ValueError(f"backend_per_kind: {kind!r} is not a KV-cache kind ({', '.join(KV_CACHE_KINDS)})")
    return kind


def _backend_value(value: object, where: str, accepted: Optional[FrozenSet[str]] = None) -> Optional[str]:
    """One backend value as vLLM parses it: 'auto' (any case) is automatic (None), else exactly one
    name of `accepted` (AttentionBackendEnum by default), upper-cased."""
    accepted = backend_names() if accepted is None else accepted
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: expected a backend name, got {value!r}")
    name = value.strip().upper()
    if name == "AUTO":
        return None
    if name not in accepted:
        raise _refuse(where, value, accepted, "a vLLM backend name")
    return name


class _Parsed:
    def __init__(self) -> None:
        self.decoder: Optional[str] = None
        self.decode: Optional[str] = None
        self.encoder: Optional[str] = None
        self.mla_prefill: Optional[str] = None
        self.per_kind: Dict[str, Optional[str]] = {}

    def config_key(self, key: str, value: object, where: str) -> None:
        """One attention_config key (a JSON value, or the text after a dotted flag)."""
        if key in ("prefill_backend", "decode_backend"):  # the key, or --attention-decode-backend
            _unreleased(where, 3)  # the caller of parse_flags
        if key in ("backend", "prefill_backend"):
            self.decoder = _backend_value(value, where)
        elif key == "decode_backend":
            self.decode = _backend_value(value, where)
        elif key == "mla_prefill_backend":
            name = _backend_value(value, where, mla_prefill_names())
            self.mla_prefill = None if name is None else to_mla_prefill(name)
        elif key == "backend_per_kind":
            if isinstance(value, str):
                value = _json_object(value, where)
            if not isinstance(value, dict):
                raise ValueError(f"{where}: expected an object of KV-cache kind -> backend, got {value!r}")
            for kind, name in value.items():
                self.per_kind[_kind(kind)] = _backend_value(name, f"{where}.{kind}")
        elif key.startswith("backend_per_kind."):
            kind = key[len("backend_per_kind."):]
            self.per_kind[_kind(kind)] = _backend_value(value, where)
        # Other attention_config keys (flash_attn_version, use_trtllm_attention, ...) choose no backend.


def _dashed(token: str) -> str:
    """A `--flag_name...` token as vLLM's FlexibleArgumentParser reads it: underscores become dashes in
    the flag's name, up to its first '.' or '=' (the keys of a dotted --attention-config keep theirs)."""
    if not token.startswith("--"):
        return token
    end = min((i for i in (token.find("."), token.find("=")) if i >= 0), default=len(token))
    return token[:end].replace("_", "-") + token[end:]


def _unreleased(where: str, stacklevel: int) -> None:
    warnings.warn(f"{where}: vLLM PR #48162's per-phase setting, which vLLM {RELEASE} refuses (not in a "
                  "release); read as the PR defines it", UserWarning, stacklevel=stacklevel + 1)


def parse_flags(args: Union[str, Sequence[str]]) -> VllmOverrides:
    """The attention flags of a vLLM command line (a string or an argv list) in attnsel's names.

    Reads --attention-backend, --mm-encoder-attn-backend, vLLM PR #48162's --attention-decode-backend and
    --attention-prefill-backend (an alias of --attention-backend; both with a UserWarning: vLLM 0.33.0
    refuses them, as it does the config keys prefill_backend and decode_backend), a leading
    VLLM_ATTENTION_BACKEND=NAME (removed by vLLM PR #50292: read, with a warning), and the attention config: ``--attention-config JSON`` /
    ``-ac JSON`` and the dotted forms ``--attention-config.KEY VALUE`` / ``-ac.KEY=VALUE`` for the keys
    backend, prefill_backend, decode_backend, mla_prefill_backend and backend_per_kind
    (``-ac.backend_per_kind.KIND NAME`` too). As vLLM's parser, a flag may spell its dashes as
    underscores (``--attention_backend``). Later flags win, key by key. 'auto' (any case) is automatic
    selection. Each value is parsed as vLLM parses it: one enum name, or ValueError where vLLM would
    refuse it (a list, an exclusion, a name it does not have). Other flags are ignored.
    """
    tokens = [_dashed(t) for t in _split(args)]
    p = _Parsed()
    plain = {ATTENTION_BACKEND_FLAG: "backend", PREFILL_ALIAS_FLAG: "backend", DECODE_FLAG: "decode_backend"}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, value = token.partition("=")
        config_prefix = next((f for f in (ATTENTION_CONFIG_FLAG, _ATTENTION_CONFIG_SHORT)
                              if name == f or name.startswith(f + ".")), None)
        if name == ENV_VAR and eq:
            warnings.warn(f"{ENV_VAR} was removed from vLLM (PR #50292): newer vLLM ignores it; read as "
                          f"{ATTENTION_BACKEND_FLAG} for the releases that still read it", FutureWarning,
                          stacklevel=2)
            p.decoder = _backend_value(value, ENV_VAR)
            i += 1
            continue
        if name in plain or name == ENCODER_FLAG or config_prefix:
            if not eq:
                if i + 1 >= len(tokens) or tokens[i + 1].startswith("-"):
                    raise ValueError(f"{name}: needs a value")
                value = tokens[i + 1]
                i += 1
            if name == ENCODER_FLAG:
                p.encoder = _backend_value(value, name)
            elif name in plain:
                if name == PREFILL_ALIAS_FLAG:  # config_key warns for the decode flag's key
                    _unreleased(name, 2)
                p.config_key(plain[name], value, name)
            elif name == config_prefix:
                doc = _json_object(value, name)
                for key, v in doc.items():
                    p.config_key(key, v, f"{name}.{key}")
            else:
                p.config_key(name[len(config_prefix) + 1:], value, name)
        i += 1
    return VllmOverrides(
        decoder=p.decoder,
        decode=p.decode,
        encoder=p.encoder,
        backend_per_kind=tuple(sorted((k, v) for k, v in p.per_kind.items() if v is not None)),
        mla_prefill=p.mla_prefill,
    )
