# SPDX-License-Identifier: Apache-2.0
"""Every layer of a model: its config.json's layers grouped by how they attend, each group planned."""

import dataclasses
import os
from typing import TYPE_CHECKING, Mapping, Optional, Tuple, Union

from ._attnsel import ModelConfig, OverrideSet, Platform, Query, Registry, Selection, SelectionError
from ._attnsel import _plan_model

if TYPE_CHECKING:  # the annotation of plan_model's override
    from .engines.vllm import VllmOverrides

Answer = Union[Selection, SelectionError]


@dataclasses.dataclass(frozen=True)
class LayerGroup:
    """The layers of one kind of one ``part`` ('text', 'vision', 'audio'). Text layers: 'full', 'sliding'
    (``window`` tokens), 'chunked' (``window``: the chunk), 'linear' (the linear domain) or 'cross' (an
    encoder-decoder model's decoder layers attending to the encoder). A tower's layers: 'encoder', which
    run once over each input: ``prefill`` is their selection, ``decode`` and ``decode_query`` are None.
    ``layers`` are 0-based indices of the part, None when the config does not count its layers.
    ``prefill`` and ``decode`` are each a Selection, or the SelectionError of that phase."""

    kind: str
    part: str
    window: Optional[int]
    layers: Optional[Tuple[int, ...]]
    prefill: Answer
    decode: Optional[Answer]
    prefill_query: Query
    decode_query: Optional[Query]
    block_size: Optional[int]
    conflict: Optional[str]

    @property
    def ok(self) -> bool:
        decoded = self.kind == "encoder" or isinstance(self.decode, Selection)
        return isinstance(self.prefill, Selection) and decoded and self.conflict is None


@dataclasses.dataclass(frozen=True)
class ModelPlan:
    """The text groups in order of their first layer, then cross-attention, then the towers; ``block_size`` the one KV-cache block size every attention
    group accepts (None when none matters or none fits); ``conflicts`` why the groups cannot run together;
    ``assumptions`` what the config left to its model family's rule; ``notes`` what the plan was given and
    did not use (a per-kind override of a kind the model has no layer of) and what the engine's own rules
    did; ``model_rule`` the id of the engine's model rule that held (the catalog's ``model_rules``: vLLM
    forces TRITON_ATTN on a Gemma 4 model without FA4), else None; ``linear_state_bytes`` one linear
    layer's state per rank when ``block_size`` was raised so that one attention page holds it (the
    catalog's ``hybrid_pages``), else None."""

    groups: Tuple[LayerGroup, ...]
    block_size: Optional[int]
    conflicts: Tuple[str, ...]
    assumptions: Tuple[str, ...]
    notes: Tuple[str, ...]
    ok: bool
    model_rule: Optional[str] = None
    linear_state_bytes: Optional[int] = None


# vLLM's KV-cache spec kinds (attention_config.backend_per_kind keys) as attnsel's layer kinds, for a model
# of standard attention and for an MLA one (vLLM's get_attn_spec_kind; vllm.kv_cache_kind).
_VLLM_KINDS = {
    "standard": {"full_attention": "full", "sliding_window": "sliding", "chunked_local_attention": "chunked",
                 "cross_attention": "cross", "mamba": "linear"},
    "mla": {"mla_attention": "full", "sliding_window_mla": "sliding", "chunked_local_attention": "chunked",
            "cross_attention": "cross", "mamba": "linear"},
}


def _from_vllm(overrides, config, given: Optional[Mapping[str, str]]):
    """A VllmOverrides as plan_model's override, per_kind and notes: the base overrides, backend_per_kind in
    attnsel's layer kinds (a vLLM kind no layer of this model has is a note, as vLLM ignores it), and for a
    dense MLA model its mla_prefill_backend as the prefill override (vLLM's MLA prefill never reads the
    decoder backend: unset, it selects on its own; VllmOverrides.for_query)."""
    from ._attnsel import read_model_config  # a path or dict: read once here for its mode

    if given is not None and not isinstance(given, Mapping):
        raise TypeError(f"per_kind: expected None or a dict of layer kind -> backend spec, got {type(given).__name__}")
    model = config if isinstance(config, ModelConfig) else read_model_config(config)
    table = _VLLM_KINDS["standard" if model.mode == "standard" else "mla"]
    per_kind = dict(given or {})
    notes = []
    for kind, backend in overrides.backend_per_kind:
        if kind in table:
            per_kind.setdefault(table[kind], backend)
        else:
            notes.append(f"backend_per_kind {kind} ({backend}) is unused: no layer of this "
                         f"{'standard-attention' if model.mode == 'standard' else 'MLA'} model is of that kind")
    if model.mode != "mla":
        return overrides.override_set(), per_kind, notes
    return OverrideSet(decoder=overrides.decoder or "", encoder=overrides.encoder or "",
                       prefill=overrides.mla_prefill or "", decode=overrides.decode, linear=overrides.linear or "",
                       drafter=overrides.drafter), per_kind, notes


def plan_model(registry: Registry, config: Union[ModelConfig, str, "os.PathLike", dict], platform: Platform, *,
               query: Optional[Query] = None, override: Union[None, str, OverrideSet, "VllmOverrides"] = None,
               tp: int = 1, prefer: bool = False, refuse_advisories: bool = False,
               per_kind: Optional[Mapping[str, str]] = None, prefix_caching: Optional[bool] = None) -> ModelPlan:
    """Groups the text layers of `config` (a ModelConfig, a config.json path or its dict) by kind and plans
    each group's prefill and decode on `platform`, as ``attnsel plan --model-config`` does; an
    encoder-decoder model's cross-attention and each tower (``config.towers``) are groups too.

    `query` is the model's query (default ``config.to_query(tp=tp)``: give one to set the dtype or the
    lengths); each group asks it with its own features and sizes (``sliding_window`` only on sliding
    layers). `override` is one spec for every domain, an OverrideSet, or the VllmOverrides of a vLLM
    command line (``attnsel.engines.vllm.parse_flags``: its backend_per_kind applies per group, a kind no
    layer has is a note, and a dense MLA model's prefill reads its mla_prefill_backend). `per_kind` maps a layer kind ('full', 'sliding',
    'chunked', 'linear', 'cross', 'encoder') to the spec its group reads in place of its domain's override.
    `prefix_caching` is the engine's (None: on, vLLM's default for a hybrid model, named among the
    assumptions where a hybrid model's block size depends on it).
    """
    from .engines.vllm import VllmOverrides

    notes: Tuple[str, ...] = ()
    if isinstance(override, VllmOverrides):
        override, per_kind, unused = _from_vllm(override, config, per_kind)
        notes = tuple(unused)
    raw = _plan_model(registry, config, platform, query=query, override=override, tp=tp, prefer=prefer,
                      refuse_advisories=refuse_advisories, per_kind=per_kind, prefix_caching=prefix_caching)
    return ModelPlan(groups=tuple(LayerGroup(**g) for g in raw["groups"]), block_size=raw["block_size"],
                     conflicts=raw["conflicts"], assumptions=raw["assumptions"], notes=raw["notes"] + notes,
                     ok=raw["ok"], model_rule=raw["model_rule"], linear_state_bytes=raw["linear_state_bytes"])
