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
import json
import shlex
from typing import Dict, Iterable, List, Optional, Sequence, Union

from .._attnsel import OverrideSet

__all__ = ["EngineOverrides"]


@dataclasses.dataclass(frozen=True)
class EngineOverrides:
    """The attention-backend overrides an engine command line carries, in attnsel's names.

    ``decoder`` is the base backend; ``prefill`` and ``decode`` are per-phase backends, which inherit the
    base when unset (SGLang's rule; see :meth:`for_phase`); ``encoder`` is the multimodal-encoder backend;
    ``linear`` is the kernel of the model's linear-attention or mamba layers (attnsel's ``linear`` domain),
    and ``linear_prefill`` / ``linear_decode`` that kernel in one phase (unset: ``linear``);
    ``drafter`` is the speculative-decoding draft model's backend (unset: the draft inherits the decoder's).
    Every name is attnsel's canonical name (``FA3``), or None when the command line does not set it.
    """

    decoder: Optional[str] = None
    prefill: Optional[str] = None
    decode: Optional[str] = None
    encoder: Optional[str] = None
    linear: Optional[str] = None
    drafter: Optional[str] = None
    linear_prefill: Optional[str] = None
    linear_decode: Optional[str] = None

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
            linear = self.linear_prefill if phase == "prefill" else self.linear_decode
            return OverrideSet(decoder=self.for_phase(phase) or "", encoder=self.encoder or "", source=source,
                               linear=(linear if linear is not None else self.linear) or "", drafter=self.drafter)
        return OverrideSet(decoder=self.decoder or "", encoder=self.encoder or "", source=source,
                           prefill=self.prefill, decode=self.decode, linear=self.linear or "", drafter=self.drafter,
                           linear_prefill=self.linear_prefill, linear_decode=self.linear_decode)


def _check_domain(value: object, flag: str, *, encoder: bool, encoder_flag: str) -> None:
    """Refuses a Selection made for the other side of the multimodal-encoder split: one of the encoder
    domain alone given to a decoder flag, or one without the encoder domain given to the encoder flag.
    A plain name carries no domain and passes."""
    domains = tuple(getattr(value, "domains", ()))
    if not domains:
        return
    name = getattr(value, "backend", value)
    if not encoder and domains == ("encoder",):
        raise ValueError(f"{flag}: {name} was selected for the multimodal encoder: pass it as encoder= "
                         f"({encoder_flag})")
    if encoder and "encoder" not in domains:
        raise ValueError(f"{flag}: {name} was selected for the {'/'.join(domains)} domain, not the multimodal "
                         f"encoder")


# attnsel's limits::block_size: the largest KV-cache block (page) size a query or flag may carry.
MAX_BLOCK_SIZE = 1 << 20
# Deepest JSON nesting a flag value may hold (a catalog needs about 6; attnsel's catalog_limits bound 32):
# deeper text is refused before json.loads, whose recursion would raise RecursionError.
MAX_JSON_DEPTH = 32


def _block_size(value: object, where: str) -> int:
    """A KV-cache block / page size for an engine flag: an integer in [1, MAX_BLOCK_SIZE], or None or 0
    (Selection.block_size_for's "no preference"), which add no flag (0 returned). ValueError for anything
    the engine would refuse or misread (a negative size, 0.5, True)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BLOCK_SIZE:
        raise ValueError(f"{where}: expected an integer in [1, {MAX_BLOCK_SIZE}] (or 0 / None: no flag), "
                         f"got {value!r:.40}")
    return value


def _json_depth(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}" and depth:
            depth -= 1
    return deepest


def _bounded_json(text: str, where: str, error: type = ValueError):
    """`json.loads(text)`, raising `error` (a ValueError subclass) with `where` for text that is not JSON
    or nests deeper than MAX_JSON_DEPTH levels (json's own recursion would raise RecursionError)."""
    if _json_depth(text) > MAX_JSON_DEPTH:
        raise error(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except ValueError as e:
        raise error(f"{where}: not JSON: {e}") from None


def _json_object(text: str, where: str) -> dict:
    """A flag's JSON object value; ValueError (never RecursionError) for text that is not one."""
    doc = _bounded_json(text, where)
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object, got {text!r:.80}")
    return doc


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
