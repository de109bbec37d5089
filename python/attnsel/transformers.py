# SPDX-License-Identifier: Apache-2.0
"""attnsel.transformers: ``attn_implementation="attnsel"`` for Hugging Face transformers models.

    import attnsel.transformers  # registers "attnsel" with transformers' attention interfaces
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attnsel")

Every attention call of the model then runs the SDPA backend attnsel selects for that call's shape
(attnsel.torch's routing: the installed torch's catalog, or the Registry given to use_registry, e.g. with
a measured overlay merged). Masks are built as for ``"sdpa"``. Eager and ``torch.compile(fullgraph=True)``
both work (attnsel.torch.install explains the compiled path).

Importable only where torch and transformers are installed; neither is a dependency of attnsel.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import torch
from transformers import AttentionInterface
from transformers.integrations import sdpa_attention
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from . import Registry
from . import torch as _at

__all__ = ["NAME", "attention_forward", "register", "use_registry"]

NAME = "attnsel"


def attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    dropout: float = 0.0,
    scaling: Optional[float] = None,
    is_causal: Optional[bool] = None,
    **kwargs,
) -> Tuple[torch.Tensor, None]:
    """One attention call of a transformers model, in the shape transformers' interface passes: query
    (batch, heads, length, dim), key and value (batch, kv heads, length, dim); returns the output as
    (batch, length, heads, dim) and no weights.

    A paged cache (continuous batching) or a position bias (T5's relative attention) is handled by
    transformers' own sdpa function, whose SDPA call is routed only while attnsel.torch.install() is on.
    Attention sinks (`s_aux`, gpt-oss) are refused with a ValueError, as transformers refuses "sdpa" there.
    """
    if kwargs.get("s_aux") is not None:
        # gpt-oss's attention sinks: no SDPA backend adds them, and transformers refuses "sdpa" for such models.
        raise ValueError("attn_implementation='attnsel' runs SDPA, which has no attention sinks (s_aux); this model "
                         "needs 'eager' or a kernel with sinks")
    if kwargs.get("cache") is not None or kwargs.get("position_bias") is not None:
        return sdpa_attention.sdpa_attention_forward(module, query, key, value, attention_mask, dropout, scaling,
                                                     is_causal, **kwargs)
    groups = getattr(module, "num_key_value_groups", 1)
    enable_gqa = False
    if groups > 1:
        if attention_mask is None:
            enable_gqa = True  # the call states grouped heads; attnsel selects a backend that takes them
        else:  # a masked grouped call would run only MATH: give the kernels one KV head per query head
            key = key.repeat_interleave(groups, dim=1)
            value = value.repeat_interleave(groups, dim=1)
    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    q_len, kv_len = query.shape[2], key.shape[2]
    # A causal call without a mask: a single query token sees every key; several see the keys up to their
    # own position (SDPA's causal mask is aligned at the top left, so keys past the queries are never seen:
    # dropped, as after a prefill into an empty static cache, which lets the square-only kernels run).
    is_causal = q_len > 1 and attention_mask is None and is_causal
    if is_causal and kv_len > q_len:
        key, value = key[:, :, :q_len], value[:, :, :q_len]
    out = _at._routed(query, key, value, attention_mask, dropout, is_causal, scaling, enable_gqa)
    return out.transpose(1, 2).contiguous(), None


def use_registry(registry: Optional[Registry], kernels: Optional[Dict[str, Callable[..., torch.Tensor]]] = None) -> None:
    """The catalog "attnsel" layers select from (None: the installed torch's catalog) and the kernels of
    backends beyond SDPA's (attnsel.kernels); the same setting as attnsel.torch.install's, without
    routing other SDPA calls. TypeError or ValueError, changing nothing, for what install refuses."""
    _at._set_route(registry, kernels)


def register(name: str = NAME) -> None:
    """Registers `name` with transformers' AttentionInterface (attention_forward) and AttentionMaskInterface
    (the sdpa mask); done once on import under "attnsel". Registering again replaces the entries."""
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, sdpa_mask)


register()
