# SPDX-License-Identifier: Apache-2.0
# Engine vocabularies: attnsel selections as engine flags, and engine flags as attnsel overrides.
"""Translate between attnsel and an inference engine's own attention flags.

attnsel.engines.vllm and attnsel.engines.sglang each offer:

- ``flags(...)``: the command-line flags that make the engine run what attnsel selected;
- ``parse_flags(args)``: the attention flags of an engine command line as an :class:`EngineOverrides`,
  whose ``override_set()`` is the attnsel override that asks attnsel the same question.

docs/engines/vllm.md and docs/engines/sglang.md show both directions.
"""

import dataclasses
import shlex
from typing import Dict, Iterable, List, Optional, Sequence, Union

from .._attnsel import OverrideSet

__all__ = ["EngineOverrides"]


@dataclasses.dataclass(frozen=True)
class EngineOverrides:
    """The attention-backend overrides an engine command line carries, in attnsel's names.

    ``decoder`` is the base backend; ``prefill`` and ``decode`` are per-phase backends, which inherit the
    base when unset (SGLang's rule; see :meth:`for_phase`); ``encoder`` is the multimodal-encoder backend.
    Every name is attnsel's canonical name (``FA3``), or None when the command line does not set it.
    """

    decoder: Optional[str] = None
    prefill: Optional[str] = None
    decode: Optional[str] = None
    encoder: Optional[str] = None

    def for_phase(self, phase: str) -> Optional[str]:
        """The backend of 'prefill' or 'decode', falling back to the base backend."""
        if phase not in ("prefill", "decode"):
            raise ValueError(f"phase: {phase!r} is not one of prefill, decode")
        own = self.prefill if phase == "prefill" else self.decode
        return own if own is not None else self.decoder

    def override_set(self, phase: Optional[str] = None, source: str = "api") -> OverrideSet:
        """The attnsel OverrideSet: without `phase`, the base, per-phase and encoder overrides (an unset
        phase inherits the base); with `phase`, that phase's backend as the decoder override."""
        if phase is not None:
            return OverrideSet(decoder=self.for_phase(phase) or "", encoder=self.encoder or "", source=source)
        return OverrideSet(decoder=self.decoder or "", encoder=self.encoder or "", source=source,
                           prefill=self.prefill, decode=self.decode)


def _split(args: Union[str, Sequence[str]]) -> List[str]:
    if isinstance(args, str):
        return shlex.split(args)
    return [str(a) for a in args]


def _scan(args: Union[str, Sequence[str]], flag_names: Iterable[str]) -> Dict[str, str]:
    """The value of each of `flag_names` in `args` (`--flag VALUE` or `--flag=VALUE`; the last one wins)."""
    names = set(flag_names)
    tokens = _split(args)
    found: Dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, eq, value = token.partition("=")
        if name in names:
            if not eq:
                if i + 1 >= len(tokens) or tokens[i + 1].startswith("--"):
                    raise ValueError(f"{name}: needs a value")
                value = tokens[i + 1]
                i += 1
            found[name] = value
        i += 1
    return found
