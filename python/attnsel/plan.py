# SPDX-License-Identifier: Apache-2.0
"""Every layer of a model: its config.json's layers grouped by how they attend, each group planned."""

import dataclasses
from typing import Optional, Tuple, Union

from ._attnsel import ModelConfig, OverrideSet, Platform, Query, Registry, Selection, SelectionError
from ._attnsel import _plan_model

Answer = Union[Selection, SelectionError]


@dataclasses.dataclass(frozen=True)
class LayerGroup:
    """The layers of one kind: 'full', 'sliding' (``window`` tokens), 'chunked' (``window``: the chunk)
    or 'linear' (the linear domain). ``layers`` are 0-based indices, None when the config does not count
    its layers. ``prefill`` and ``decode`` are each a Selection, or the SelectionError of that phase."""

    kind: str
    window: Optional[int]
    layers: Optional[Tuple[int, ...]]
    prefill: Answer
    decode: Answer
    prefill_query: Query
    decode_query: Query
    block_size: Optional[int]
    conflict: Optional[str]

    @property
    def ok(self) -> bool:
        return isinstance(self.prefill, Selection) and isinstance(self.decode, Selection) and self.conflict is None


@dataclasses.dataclass(frozen=True)
class ModelPlan:
    """The groups in order of their first layer; ``block_size`` the one KV-cache block size every attention
    group accepts (None when none matters or none fits); ``conflicts`` why the groups cannot run together;
    ``assumptions`` what the config left to its model family's rule."""

    groups: Tuple[LayerGroup, ...]
    block_size: Optional[int]
    conflicts: Tuple[str, ...]
    assumptions: Tuple[str, ...]
    ok: bool


def plan_model(registry: Registry, config: Union[ModelConfig, str, "os.PathLike", dict], platform: Platform, *,
               query: Optional[Query] = None, override: Union[None, str, OverrideSet] = None, tp: int = 1,
               prefer: bool = False, refuse_advisories: bool = False) -> ModelPlan:
    """Groups the text layers of `config` (a ModelConfig, a config.json path or its dict) by kind and plans
    each group's prefill and decode on `platform`, as ``attnsel plan --model-config`` does.

    `query` is the model's query (default ``config.to_query(tp=tp)``: give one to set the dtype or the
    lengths); each group asks it with its own features and sizes (``sliding_window`` only on sliding
    layers). `override` is one spec for every domain or an OverrideSet.
    """
    raw = _plan_model(registry, config, platform, query=query, override=override, tp=tp, prefer=prefer,
                      refuse_advisories=refuse_advisories)
    return ModelPlan(groups=tuple(LayerGroup(**g) for g in raw["groups"]), block_size=raw["block_size"],
                     conflicts=raw["conflicts"], assumptions=raw["assumptions"], ok=raw["ok"])
