# SPDX-License-Identifier: Apache-2.0
"""`python -m attnsel.tune`: the command line, --verify, and the files it writes (each replaced whole)."""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import tempfile
from typing import Callable, List, Optional, Sequence

import attnsel
from attnsel import _attnsel

from .measure import Method, Runner, tune
from .overlay import check_platform, overlay, regret_rows, report, tuned_choice
from .records import check_results, read_measurements, to_json
from .torch_runner import TorchRunner
from .workload import Workload, decoder_classes, encoder_classes, preset

DESCRIPTION = "attnsel.tune: choose the SDPA backend by measured speed on this GPU, and keep the measurements as data."

def _ints(text: str) -> List[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers") from None


def _progress(done: int, total: int, label: str) -> None:  # pragma: no cover - a terminal nicety
    width = 30
    fill = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} {label[:50]:<50}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def workloads_from_args(a: argparse.Namespace) -> List[Workload]:
    if a.preset:
        return preset(a.preset)
    if a.model_config is not None:
        if not a.model_config:
            raise ValueError("--model-config: the path is empty (an unset variable?)")
        q = attnsel.Query.from_model_config(a.model_config, **({"dtype": a.dtype} if a.dtype else {}))
        if q.mode != "standard":
            raise ValueError(f"--model-config: {a.model_config} is an MLA model (mode {q.mode}): its layers attend "
                             f"over the compressed latent KV (head size {q.head_size}), which no plain SDPA call "
                             "describes; tune does not time MLA kernels")
        heads, kv_heads, d, dv = q.num_heads, q.num_kv_heads or q.num_heads, q.head_size, q.head_size_v or q.head_size
        dtype = a.dtype or q.dtype
    else:
        if not (a.num_heads and a.head_size):
            raise ValueError("give --preset, --model-config, or --num-heads and --head-size")
        heads, kv_heads, d, dv = a.num_heads, a.num_kv_heads or a.num_heads, a.head_size, a.head_size
        dtype = a.dtype or "bfloat16"
    if heads % kv_heads:
        raise ValueError(f"--num-kv-heads {kv_heads} does not divide --num-heads {heads}")
    if a.encoder:
        classes = encoder_classes(a.tokens or [256, 1024, 4096], a.encoder_batch)
    else:
        classes = decoder_classes(a.prefill if a.prefill is not None else [128, 512, 2048, 8192],
                                  a.decode_batch if a.decode_batch is not None else [1, 8, 64],
                                  a.decode_kv if a.decode_kv is not None else [1024, 8192])
    return [Workload(a.name or "custom", heads, kv_heads, d, dv, dtype, classes)]


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer in [1, 1000]")
    return n


def _percent(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not (math.isfinite(v) and 0.0 <= v <= 1000.0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage in [0, 1000]")
    return v


def catalog_for(platform: attnsel.Platform) -> attnsel.Registry:
    """The built-in SDPA catalog of the torch a platform states (attnsel.detect.sdpa_catalog): the
    catalog whose default a measurement is checked against and whose overlay is written (torch_sdpa
    when the platform states no torch)."""
    from attnsel.detect import sdpa_catalog

    return attnsel.builtin_catalog(sdpa_catalog(platform.components.get("torch") or "2.11.0"))


def _families(text: str) -> List[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    known = ("flex", "eager")
    if not names or any(x not in known for x in names):
        raise argparse.ArgumentTypeError(f"'{text}': give families from {', '.join(known)}, comma-separated")
    return list(dict.fromkeys(names))


def _differences(m: dict, platform: attnsel.Platform) -> List[str]:
    """What differs on `platform` from a rule's `measured` fingerprint (C++ measurement::differences)."""
    return _attnsel._tuning_differences(str(m.get("device") or ""), [str(c) for c in m.get("components") or []],
                                        [str(n) for n in m.get("present") or []],
                                        [str(n) for n in m.get("absent") or []], platform)


def stale_rules(doc: dict, platform: attnsel.Platform) -> List[str]:
    """Why each measured rule of an overlay document cannot hold on `platform` (one line per rule that
    cannot; empty when every rule's fingerprint matches): another device, another component version
    (compared as the catalog compares versions), a switch present or absent otherwise."""
    out = []
    for i, rule in enumerate(doc.get("policies") or []):
        m = rule.get("measured") if isinstance(rule, dict) else None
        if not isinstance(m, dict):
            continue
        why = _differences(m, platform)
        if why:
            out.append(f"rule {i}: {'; '.join(why)}")
    return out


def verify(workloads: Sequence[Workload], overlay_path: str, platform: attnsel.Platform, runner: Runner,
           a: argparse.Namespace, method: Method, command: str, data_error: Callable[[str], None],
           base: Optional[attnsel.Registry] = None) -> int:
    """--verify: one interleaved pass over every class with the overlay layered on the base catalog,
    reported as tuned against torch's default (the check of an overlay in a process of its own). Refused
    (exit 1) when no measured rule of the overlay holds on this machine, or a rule names a backend the
    runner has no kernel for (--families)."""
    base = base if base is not None else catalog_for(platform)
    merged = base.copy()
    try:
        merged.merge(overlay_path)
        with open(overlay_path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, attnsel.CatalogError) as e:
        data_error(f"--verify: {overlay_path}: {e}")
        return 1
    measured = [r for r in doc.get("policies", []) if isinstance(r, dict) and "measured" in r]
    stale = stale_rules(doc, platform)
    if measured and len(stale) == len(measured):
        data_error(f"--verify: {overlay_path}: none of its {len(measured)} measured rules holds on this machine "
                   f"({stale[0]}{'; ...' if len(stale) > 1 else ''}): re-timing it here would check nothing")
        return 1
    for line in stale:
        sys.stderr.write(f"note: {overlay_path}: {line}: it does not hold here\n")
    holding = [r for r in measured if isinstance(r["measured"], dict) and not _differences(r["measured"], platform)]
    untimed = sorted({b for r in holding for b in (r.get("order") or [])[:1]
                      if isinstance(b, str) and b in merged and not runner.has(b)})
    if untimed:
        data_error(f"--verify: {overlay_path}: its rules put {', '.join(untimed)} first, which this run has no "
                   "kernel for (--families)")
        return 1
    results = tune(workloads, base, platform, runner, a.budget, progress=_progress, method=method, decide=False)
    rows = regret_rows(results, tuned_choice(merged, platform))
    text = report(results, rows, command)
    try:
        if a.report:
            write_atomic(a.report, text)
        if a.json:
            write_atomic(a.json, _json_text({**to_json(results), "rows": rows}))
    except (OSError, ValueError) as e:
        data_error(str(e))
    if not a.report:
        sys.stdout.write(text)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attnsel.tune", description=DESCRIPTION)
    ap.add_argument("--preset", choices=["llama3-8b", "decoders", "vit", "llm+vit", "heldout"])
    ap.add_argument("--model-config", help="a Hugging Face config.json (heads, KV heads, head size, dtype)")
    ap.add_argument("--num-heads", type=int)
    ap.add_argument("--num-kv-heads", type=int)
    ap.add_argument("--head-size", type=int)
    ap.add_argument("--dtype", choices=["float16", "bfloat16", "float32"])
    ap.add_argument("--name", help="the workload's name in notes and the report")
    ap.add_argument("--prefill", type=_ints, help="prefill lengths (default 128,512,2048,8192)")
    ap.add_argument("--decode-batch", type=_ints, help="decode batch sizes (default 1,8,64)")
    ap.add_argument("--decode-kv", type=_ints, help="decode KV lengths (default 1024,8192)")
    ap.add_argument("--encoder", action="store_true", help="a non-causal encoder over --tokens")
    ap.add_argument("--tokens", type=_ints)
    ap.add_argument("--encoder-batch", type=int, default=1)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds; classes past it are skipped and listed")
    defaults = Method()
    ap.add_argument("--rounds", type=_count, default=defaults.rounds, help="interleaved rounds per backend")
    ap.add_argument("--reps", type=_count, default=defaults.reps, help="samples per backend and round")
    ap.add_argument("--spread-limit", type=_percent, default=defaults.spread_limit_pct,
                    help="percent; a winner or default spreading more is measured again, and then needs a gain "
                         "beyond twice its spread")
    ap.add_argument("--retries", type=int, choices=range(0, 11), default=defaults.retries, metavar="0..10")
    ap.add_argument("--min-gain", type=_percent, default=defaults.min_gain_pct,
                    help="percent; the least gain over the default that may reorder (the spreads can raise it)")
    ap.add_argument("--confirm-rounds", type=_count, default=defaults.confirm_rounds)
    ap.add_argument("--families", type=_families, default=[],
                    help="kernel families timed beside SDPA's backends, comma-separated: flex (FlexAttention, "
                         "compiled), eager (transformers' eager attention, the floor)")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="time each sample as the replay of a CUDA graph of the calls: the kernels without "
                         "their launch cost, as an engine that captures its steps runs them")
    ap.add_argument("--launched", action="store_true",
                    help="time the calls at the rate Python launches them (by default the device sleeps while "
                         "each sample's calls are queued, so they run back to back as in a model)")
    ap.add_argument("--verify", metavar="OVERLAY",
                    help="re-time the classes with OVERLAY layered on torch_sdpa and report the tuned choice "
                         "against torch's default; writes no overlay")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--from-json", metavar="FILE",
                    help="rewrite the overlay and report from recorded measurements (a --json file); no GPU")
    ap.add_argument("--out", help="the overlay to write (catalog JSON, format 2); required unless --verify")
    ap.add_argument("--report", help="a Markdown report to write (default: standard output)")
    ap.add_argument("--json", help="every measurement as JSON")
    a = ap.parse_args(argv)
    if not a.out and not a.verify:
        ap.error("--out is required (unless --verify)")
    if a.verify and a.from_json:
        ap.error("--verify re-times on this GPU; it does not take --from-json")
    method = Method(a.rounds, a.reps, a.spread_limit, a.retries, a.min_gain, a.confirm_rounds)
    command = shlex.join(["python", "-m", "attnsel.tune", *(sys.argv[1:] if argv is None else argv)])

    def data_error(message: str) -> None:  # bad measurements or an unwritable file: exit 1, no traceback
        ap.exit(1, f"{ap.prog}: error: {message}\n")

    if a.from_json:
        try:
            with open(a.from_json, "rb") as f:
                results = read_measurements(f.read())
        except (OSError, ValueError) as e:
            data_error(f"--from-json: {a.from_json}: {e}")
        if not results:
            data_error(f"--from-json: {a.from_json}: no workloads were measured")
        platform = results[0].platform
    else:
        try:
            workloads = workloads_from_args(a)
        except (ValueError, attnsel.CatalogError) as e:
            ap.error(str(e))
        import attnsel.torch as at

        platform = at.platform(a.device)
        try:
            check_platform(platform)
        except ValueError as e:
            ap.error(str(e))
        base, extra, kernels_catalog = catalog_for(platform), {}, None
        if a.families:
            import attnsel.kernels as ak

            factories = {"flex": ak.flex_attention, "eager": ak.eager_attention}
            extra = {ak.FAMILIES[f]: factories[f]() for f in a.families}
            base, kernels_catalog = ak.registry(base), ak.CATALOG
        runner = TorchRunner(a.device, extra=extra, cuda_graphs=a.cuda_graphs, queued=not a.launched)
        if a.verify:
            return verify(workloads, a.verify, platform, runner, a, method, command, data_error, base)
        results = tune(workloads, base, platform, runner, a.budget, progress=_progress, method=method,
                       kernels_catalog=kernels_catalog)
        driver = attnsel.detect_platform().platform.components.get("cuda_driver")
        import torch

        torch_version = torch.__version__
        for t in results:
            t.machine = {"attnsel": attnsel.__version__, "torch": torch_version,
                         **({"driver": driver} if driver else {})}
        try:
            check_results(results)
        except ValueError as e:
            data_error(f"the measurements cannot be kept: {e}")
    # Everything is built and checked before the first file is replaced: the overlay must load on
    # torch_sdpa (merged from its temporary file), so a refused run leaves --out as it was.
    merged = catalog_for(platform)
    try:
        doc = overlay(results, command=command)
        text = _json_text(doc)
        rows = []
        with _staged(a.out, text) as staged:
            merged.merge(staged)
            rows = regret_rows(results, tuned_choice(merged, platform))
            rep = report(results, rows, command)
            extra = _json_text({**to_json(results), "rows": rows}) if a.json else None
            others = [(a.report, rep)] if a.report else []
            if extra is not None:
                others.append((a.json, extra))
            for path, body in others:
                write_atomic(path, body)
    except (OSError, ValueError, attnsel.CatalogError) as e:
        data_error(str(e))
    if not a.report:
        sys.stdout.write(rep)
    return 0


def _json_text(doc: object) -> str:
    """JSON text as the loader reads it: NaN and Infinity are refused (ValueError), never written."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def _temp_beside(path: str, text: str) -> str:
    """`text` in a new temporary file in `path`'s directory, flushed to disk; its name."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: str, text: str) -> None:
    """Replaces `path` with `text` at once: a reader sees the old file or the new one, never a part, and
    two writers each replace the whole file (the last one wins), never interleave."""
    os.replace(_temp_beside(path, text), path)


class _staged:
    """`with _staged(path, text) as tmp:` writes `text` beside `path`; the body may check the file at
    `tmp`; on a clean exit it replaces `path`, on an exception it is removed and `path` is untouched."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text, self.tmp = path, text, ""

    def __enter__(self) -> str:
        self.tmp = _temp_beside(self.path, self.text)
        return self.tmp

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            os.replace(self.tmp, self.path)
        else:
            os.unlink(self.tmp)
