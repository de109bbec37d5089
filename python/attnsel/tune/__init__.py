# SPDX-License-Identifier: Apache-2.0
"""attnsel.tune: choose the attention backend by measured speed on this GPU, and keep the measurements as data.

    python -m attnsel.tune --preset llama3-8b --out measured.json --report report.md --budget 300

For each shape class of a workload (prefill lengths, decode batch x KV length, encoder token counts)
it runs every backend the torch_sdpa catalog supports for that call, each forced as
attnsel.torch.use_backend runs it, checked against a float32 reference (a fast wrong kernel is excluded
and reported, never chosen), and timed interleaved with CUDA events (Method). A backend that beats the
default by more than the noise, twice, is moved first by one policy rule of a catalog overlay (format
2), which carries the timings and the machine's fingerprint (device name, exact torch and cuDNN
versions, the cuDNN mode). Loaded with `--catalog FILE` (CLI) or Registry.merge (Python), it holds on
that machine only; elsewhere explain lists its rules as stale with what differs.

Any kernel can be measured the same way: KernelRunner times and checks callables by backend name
(attnsel.kernels: SDPA's backends forced, FlexAttention, eager attention, or an engine's own), on a
CUDA device or the CPU; `--families flex,eager` adds the first two beside SDPA's.

The pieces, one job each: workload (what is measured), measure (how, and the decision), records (the
measurements file), overlay (the overlay, regret and report), kernel_runner (timing callables),
torch_runner (SDPA's backends and torch's own choice) and cli. The measuring is behind a small runner
interface, so the decision logic is tested with fake timings on any machine.
"""
from __future__ import annotations

from .cli import main, stale_rules, verify, workloads_from_args, write_atomic
from .kernel_runner import KernelRunner
from .measure import (ClassResult, Decision, Method, NothingToMeasure, Runner, Timing, TuneResult, confirm,
                      first_verdict, gain_over, interleaved, measure, summarize, tune)
from .overlay import (FINGERPRINT_COMPONENTS, SWITCHES, check_platform, fingerprint, geomean, overlay, regret_rows,
                      report, rule_of, Scope, scopes, switches, tuned_choice)
from .records import MEASUREMENTS_FORMAT, MeasurementError, check_results, from_json, read_measurements, to_json
from .torch_runner import TorchRunner
from .workload import (BATCH_LIMIT, SEQ_LIMIT, TOLERANCE, ShapeClass, Workload, decoder_classes, encoder_classes,
                       preset, query_of, split_ranges)

__all__ = [
    "BATCH_LIMIT", "FINGERPRINT_COMPONENTS", "MEASUREMENTS_FORMAT", "SEQ_LIMIT", "SWITCHES", "TOLERANCE",
    "ClassResult", "Decision", "KernelRunner", "MeasurementError", "Method", "NothingToMeasure", "Runner", "Scope", "ShapeClass",
    "Timing", "TorchRunner",
    "TuneResult", "Workload", "check_platform", "check_results", "confirm", "decoder_classes", "encoder_classes",
    "fingerprint", "first_verdict", "from_json", "gain_over", "geomean", "interleaved", "main", "measure",
    "overlay", "preset", "query_of", "read_measurements", "regret_rows", "report", "rule_of", "scopes", "split_ranges",
    "stale_rules",
    "summarize", "switches", "to_json", "tune", "tuned_choice", "verify", "workloads_from_args", "write_atomic",
]
