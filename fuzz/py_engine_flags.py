# SPDX-License-Identifier: Apache-2.0
# atheris target: engine command lines and environments through attnsel.engines' parsers and detect_platform.
"""Fuzzes the readers of engine flags and switches: attnsel.engines.vllm.parse_flags (flags, the
attention config JSON and its dotted keys, a leading VLLM_ATTENTION_BACKEND=NAME), attnsel.engines.sglang
.parse_flags, and the environment detect_platform reads engine switches from.

Input: byte 0 chooses (bits 0-1) the reader: 0 vLLM, 1 SGLang, 2 the environment, 3 vLLM and SGLang;
bit 2 passes the command line as an argv list (one argument per line) instead of a string (shlex);
bits 3-4 SGLang's mode (standard, mla, sparse_mla, standard). The rest is UTF-8 text (bytes that are not
are replaced); for the environment, one NAME=VALUE per line.

Invariants (docs/fuzzing.md): parse_flags raises only ValueError (never RecursionError, KeyError,
TypeError ...); a parsed command line round-trips through flags(): parse_flags(flags(o)) == o; its
override_set() builds; detect_platform with a fuzzed environment (and nothing else to find) never raises
and its platform reads back from its JSON.
"""

import dataclasses
import os
import random
import sys
import tempfile
import warnings

import atheris

with atheris.instrument_imports(include=["attnsel"]):
    import attnsel
    from attnsel.engines import sglang, vllm

MODES = ("standard", "mla", "sparse_mla", "standard")
QUERIES = None  # built on first use: a few layers whose override vLLM derives per kind


class InvariantViolated(AssertionError):
    pass


def violated(what: str, data: bytes, detail: object = "") -> None:
    raise InvariantViolated(f"py_engine_flags: invariant violated: {what}\n  input: {data[:300]!r}\n  {detail}")


def queries():
    global QUERIES
    if QUERIES is None:
        QUERIES = (attnsel.Query(), attnsel.Query(mode="mla", head_size=576), attnsel.Query(domain="encoder"),
                   attnsel.Query(features=["sliding_window"]), attnsel.Query(phase="prefill", mode="mla"))
    return QUERIES


def check_vllm(args, data: bytes) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # VLLM_ATTENTION_BACKEND=: documented warning
            warnings.simplefilter("ignore", UserWarning)  # PR #48162's per-phase flags: documented warning
            o = vllm.parse_flags(args)
    except ValueError:
        return
    # flags() writes what vLLM 0.33.0 accepts: no decode-phase flag (PR #48162), so the decode override
    # does not come back.
    again = vllm.parse_flags(vllm.flags(o.decoder, encoder=o.encoder, mla_prefill=o.mla_prefill,
                                        backend_per_kind=dict(o.backend_per_kind)))
    if again != dataclasses.replace(o, decode=None):
        violated("vllm: parse_flags(flags(o)) == o without its decode override", data, f"{o} -> {again}")
    o.override_set()
    for phase in ("prefill", "decode"):
        o.override_set(phase)
    for q in queries():
        o.override_set(query=q)


def check_sglang(args, mode: str, data: bytes) -> None:
    try:
        o = sglang.parse_flags(args, mode=mode)
    except ValueError:
        return
    again = sglang.parse_flags(sglang.flags(o.decoder, prefill=o.prefill, decode=o.decode, encoder=o.encoder),
                               mode=mode)
    if again != o:
        violated(f"sglang (mode {mode}): parse_flags(flags(o)) == o", data, f"{o} -> {again}")
    o.override_set()
    for phase in ("prefill", "decode"):
        o.override_set(phase)


EMPTY = tempfile.mkdtemp(prefix="attnsel-fuzz-empty-")  # a sysfs, proc and ROCm root with nothing in it


def check_environment(text: str, data: bytes) -> None:
    env = {}
    for line in text.splitlines():
        name, eq, value = line.partition("=")
        if eq:
            env[name] = value
    try:
        detection = attnsel.detect_platform(environment=env, packages={}, library_dirs=[], sysfs_root=EMPTY,
                                            proc_root=EMPTY, rocm_roots=[EMPTY], cuda_driver_libraries=[],
                                            cudnn_libraries=[], cudnn_loader_search=False)
    except Exception as e:  # noqa: BLE001 - "never raises for what it finds" (detect.py)
        violated("detect_platform never raises for an environment", data, repr(e))
    p = detection.platform
    if attnsel.Platform.from_json(attnsel.to_json(p)) != p:
        violated("Platform.from_json(to_json(p)) == p", data, str(p))
    # The vLLM reader of the removed VLLM_ATTENTION_BACKEND sees the same variable as a leading NAME=VALUE.
    if "VLLM_ATTENTION_BACKEND" in env:
        check_vllm(["VLLM_ATTENTION_BACKEND=" + env["VLLM_ATTENTION_BACKEND"]], data)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    selector, text = data[0], data[1:].decode("utf-8", "replace")
    reader = selector & 3
    args = text.split("\n") if selector & 4 else text
    if reader == 2:
        check_environment(text, data)
        return
    if reader in (0, 3):
        check_vllm(args, data)
    if reader in (1, 3):
        check_sglang(args, MODES[(selector >> 3) & 3], data)


# Structure-aware mutation: the text is cut into arguments (lines for an argv list or an environment,
# else whitespace), and one is inserted from this pool, replaced, dropped, doubled or glued to the next
# with '='; the selector byte changes one time in eight; one mutation in four is libFuzzer's own.
TOKENS = ("--attention-backend", "--attention_backend", "--attention-prefill-backend", "--attention-decode-backend",
          "--prefill-attention-backend", "--decode-attention-backend", "--mm-encoder-attn-backend",
          "--mm-attention-backend", "--attention-config", "-ac", "-ac.backend", "-ac.decode_backend",
          "--attention-config.mla_prefill_backend", "-ac.backend_per_kind.sliding_window", "-ac.backend_per_kind",
          "--kv-cache-dtype", "fp8_e5m2", "VLLM_ATTENTION_BACKEND=", "VLLM_ROCM_USE_AITER=1", "SGLANG_USE_AITER=0",
          "FLASH_ATTN", "flash_attn", "FLASHINFER", "TRITON_ATTN", "FLASHMLA", "TORCH_SDPA", "TRTLLM_RAGGED",
          "MLA_PREFILL_FLASHINFER", "TOKENSPEED_MLA", "auto", "AUTO", "fa3", "fa4", "flashinfer", "triton",
          "cutedsl_mla", "trtllm_mla", "triton_attn", "sdpa", "FA3,auto", "-FLASH_ATTN", "'", '"', "=", "",
          '{"backend": "FLASHINFER"}', '{"backend_per_kind": {"sliding_window": "TRITON_ATTN"}}',
          '{"backend_per_kind": "{\\"full_attention\\": \\"auto\\"}"}', '{"mla_prefill_backend": "auto"}',
          '{"backend": ["FLASH_ATTN"]}', '{"decode_backend": null}', "[" * 40 + "]" * 40, '{"backend": 1}')


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if len(data) < 1 or rng.random() < 0.25:
        return atheris.Mutate(data, max_size)
    selector = data[0] if rng.random() >= 0.125 else data[0] ^ (1 << rng.randrange(5))
    text = data[1:].decode("utf-8", "replace")
    sep = "\n" if selector & 4 or selector & 3 == 2 else " "
    args = text.split(sep) if text else []
    i = rng.randrange(len(args) + 1)
    op = rng.random()
    if op < 0.35 or not args:
        args.insert(i, rng.choice(TOKENS))
    elif op < 0.6:
        args[min(i, len(args) - 1)] = rng.choice(TOKENS)
    elif op < 0.75:
        del args[min(i, len(args) - 1)]
    elif op < 0.9:
        j = min(i, len(args) - 1)
        args.insert(j, args[j])
    elif i + 1 < len(args):
        args[i:i + 2] = [args[i] + "=" + args[i + 1]]
    out = bytes([selector]) + sep.join(args).encode()
    return out if len(out) <= max_size else atheris.Mutate(data, max_size)


def main() -> None:
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    atheris.Setup(sys.argv, test_one_input, custom_mutator=mutate)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
