# SPDX-License-Identifier: Apache-2.0
"""The engines' own argument parsers on what attnsel's adapters emit (docs/oracle.md).

Run by the oracle venv's python, one engine per process (SGLang's world hides vLLM). For every flag an
adapter writes (attnsel.engines.vllm.flags, attnsel.engines.sglang.flags) and every backend name the
adapter takes for it, the adapter's command line is parsed by the pinned engine's own parser (vLLM's
EngineArgs on a FlexibleArgumentParser, SGLang's ServerArgs on an ArgumentParser). The engine must accept
it, and each flag must hold the value the adapter wrote; a name the adapter refuses for a flag is
counted, not asked. Exit 1 when the engine refuses a command line or reads another value; the report
lists each case.

    python tools/oracle/adapter_flags.py --engine vllm|sglang [--out FILE]
"""
import argparse
import contextlib
import enum
import io
import json
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import hide_modules  # noqa: E402

REFUSED = "the engine refuses "  # held()'s lines for a value the engine's conversion refuses
# (a label, the adapter call): each yields the command line the adapter writes, or raises ValueError.
Case = Tuple[str, Callable[[], List[str]]]


def vllm_values() -> Dict[str, Callable[[str], Any]]:
    """vLLM's own conversions of the backend flags' text, which its parser leaves as text: each raises
    for a name vLLM refuses (EngineArgs.create_engine_config and MultiModalConfig run them)."""
    from vllm.config.attention import AttentionConfig
    from vllm.config.multimodal import MultiModalConfig

    return {"attention_backend": AttentionConfig.validate_backend_before,
            "mm_encoder_attn_backend": MultiModalConfig._validate_mm_encoder_attn_backend}


def vllm_parser() -> argparse.ArgumentParser:
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # the parser's defaults ask for a device type
    hide_modules(["amdsmi"])
    from vllm.engine.arg_utils import EngineArgs
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser()
    EngineArgs.add_cli_args(parser)
    return parser


def sglang_parser() -> argparse.ArgumentParser:
    import engine_sglang

    engine_sglang._setup_world({"env": {}, "vendor": "cpu"})
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def vllm_cases() -> Iterable[Case]:
    from attnsel.engines import vllm

    for name in sorted(vllm.backend_names()):
        yield f"backend={name}", lambda n=name: vllm.flags(n)
        yield f"encoder={name}", lambda n=name: vllm.flags(encoder=n)
        yield (f"backend_per_kind=sliding_window:{name}",
               lambda n=name: vllm.flags(backend_per_kind={"sliding_window": n}))
    for name in sorted(vllm.mla_prefill_names()):
        yield f"mla_prefill={name}", lambda n=name: vllm.flags(mla_prefill=vllm.to_mla_prefill(n))
    yield "block_size=64", lambda: vllm.flags(block_size=64)
    # No vLLM release has a decode-phase flag: the adapter must refuse to write one.
    yield "decode=FLASH_ATTN", lambda: vllm.flags(decode="FLASH_ATTN")


def sglang_cases() -> Iterable[Case]:
    from attnsel.engines import sglang

    decoder = sorted(sglang._domain_backends("decoder"))
    for name in decoder:
        for kw in ("backend", "prefill", "decode", "drafter"):
            yield f"{kw}={name}", lambda n=name, k=kw: sglang.flags(**{k: n})
    for name in sorted(sglang._domain_backends("encoder")):
        yield f"encoder={name}", lambda n=name: sglang.flags(encoder=n)
    for mode, names in sorted(sglang._linear_backends().items()):
        for name in sorted(names):
            for kw in ("linear", "linear_prefill", "linear_decode"):
                yield f"{kw}={name} ({mode})", lambda n=name, k=kw: sglang.flags(**{k: n})
    yield "page_size=64", lambda: sglang.flags(page_size=64)


def _plain(value: Any) -> Any:
    """A parsed value as the adapter would write it: enum members by name, configs and dicts by field."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def held(parser: argparse.ArgumentParser, ns: argparse.Namespace, argv: List[str],
         values: Dict[str, Callable[[str], Any]]) -> List[str]:
    """What differs between the adapter's flags and what the engine holds: one line per difference.
    `values`: the engine's conversion of a flag's text (by destination), run on what its parser held."""
    out = []
    for flag, value in zip(argv[::2], argv[1::2]):
        action = parser._option_string_actions.get(flag)
        if action is None:
            out.append(f"{flag}: not a flag of the parser")
            continue
        got = getattr(ns, action.dest)
        if action.dest in values:
            try:
                got = values[action.dest](got)
            except Exception as e:  # the engine refuses the name after parsing
                out.append(f"{REFUSED}{flag} {value}: {str(e).splitlines()[0]}")
                continue
        if value.startswith("{"):  # a JSON config (vLLM's --attention-config): each key the adapter set
            for key, want in json.loads(value).items():
                have = _plain(getattr(got, key, None))
                if have != want:
                    out.append(f"{flag}.{key}: the engine holds {have!r}, the adapter wrote {want!r}")
        elif str(_plain(got)) != value:
            out.append(f"{flag}: the engine holds {_plain(got)!r}, the adapter wrote {value!r}")
    return out


def check(parser: argparse.ArgumentParser, cases: Iterable[Case], prefix: List[str],
          values: Dict[str, Callable[[str], Any]]) -> Dict[str, Any]:
    rows, counts = [], {"accepted": 0, "refused_by_adapter": 0, "refused_by_engine": 0, "misread": 0}
    for label, emit in cases:
        try:
            argv = emit()
        except ValueError as e:
            counts["refused_by_adapter"] += 1
            rows.append({"case": label, "result": "refused_by_adapter", "why": str(e).splitlines()[0]})
            continue
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                ns = parser.parse_args(prefix + argv)
        except SystemExit:
            counts["refused_by_engine"] += 1
            lines = err.getvalue().strip().splitlines()
            rows.append({"case": label, "argv": argv, "result": "refused_by_engine", "why": lines[-1] if lines else ""})
            continue
        diffs = held(parser, ns, argv, values)
        result = ("refused_by_engine" if any(d.startswith(REFUSED) for d in diffs) else "misread" if diffs
                  else "accepted")
        counts[result] += 1
        rows.append({"case": label, "argv": argv, "result": result, "why": "; ".join(diffs)})
    return {"counts": counts, "cases": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=["vllm", "sglang"], required=True)
    ap.add_argument("--out", help="the report as JSON")
    a = ap.parse_args(argv)
    import logging

    logging.disable(logging.WARNING)
    if a.engine == "vllm":
        parser = vllm_parser()
        report = check(parser, vllm_cases(), [], vllm_values())
    else:
        report = check(sglang_parser(), sglang_cases(), ["--model-path", "dummy"], {})
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    c = report["counts"]
    print(f"adapter_flags: {a.engine}: {c['accepted']} command lines accepted as written, {c['refused_by_adapter']} "
          f"names the adapter refuses for a flag, {c['refused_by_engine']} refused by the engine, {c['misread']} "
          "read otherwise")
    for row in report["cases"]:
        if row["result"] in ("refused_by_engine", "misread"):
            print(f"  {row['result']}: {row['case']}: {' '.join(row['argv'])}: {row['why']}")
    return 1 if c["refused_by_engine"] or c["misread"] else 0


if __name__ == "__main__":
    sys.exit(main())
