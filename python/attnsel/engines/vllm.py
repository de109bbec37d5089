# SPDX-License-Identifier: Apache-2.0
# vLLM's attention flags <-> attnsel's `vllm` catalog (docs/engines/vllm.md).
"""vLLM's attention-backend vocabulary for the built-in ``vllm`` catalog.

attnsel's names are vLLM's own (AttentionBackendEnum: FLASH_ATTN, FLASHINFER_MLA, ...), so the mapping
is the flag, not the name:

    flags(sel)                           # ['--attention-backend', 'FLASH_ATTN']
    flags(encoder=vit_sel)               # ['--mm-encoder-attn-backend', 'TORCH_SDPA']
    parse_flags("--attention-backend=FLASHINFER").override_set()
"""

from typing import List, Optional, Sequence, Union

from . import EngineOverrides, _scan

__all__ = ["ATTENTION_BACKEND_FLAG", "ENCODER_FLAG", "flags", "parse_flags"]

ATTENTION_BACKEND_FLAG = "--attention-backend"
ENCODER_FLAG = "--mm-encoder-attn-backend"
# Older vLLM releases read the decoder backend from this environment variable instead.
ENV_VAR = "VLLM_ATTENTION_BACKEND"

Backend = Union[str, object]


def _name(backend: Backend) -> str:
    name = getattr(backend, "backend", backend)
    if not isinstance(name, str) or not name:
        raise TypeError(f"expected a backend name or an attnsel.Selection, got {backend!r}")
    return name.upper()


def flags(
    backend: Optional[Backend] = None, *, encoder: Optional[Backend] = None, block_size: Optional[int] = None
) -> List[str]:
    """vLLM command-line flags that run the given decoder and multimodal-encoder backends.

    `block_size` (e.g. ``sel.block_size_for(0)``) adds --block-size.
    """
    out: List[str] = []
    if backend is not None:
        out += [ATTENTION_BACKEND_FLAG, _name(backend)]
    if encoder is not None:
        out += [ENCODER_FLAG, _name(encoder)]
    if block_size:
        out += ["--block-size", str(int(block_size))]
    return out


def parse_flags(args: Union[str, Sequence[str]]) -> EngineOverrides:
    """The attention flags of a vLLM command line (a string or an argv list) in attnsel's names.

    Reads --attention-backend, --mm-encoder-attn-backend and a leading VLLM_ATTENTION_BACKEND=NAME
    assignment (the environment variable older releases read). Other flags are ignored.
    """
    found = _scan(args, (ATTENTION_BACKEND_FLAG, ENCODER_FLAG, ENV_VAR))
    decoder = found.get(ATTENTION_BACKEND_FLAG, found.get(ENV_VAR))
    encoder = found.get(ENCODER_FLAG)
    return EngineOverrides(
        decoder=decoder.upper() if decoder else None, encoder=encoder.upper() if encoder else None
    )
