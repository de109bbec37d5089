# SPDX-License-Identifier: Apache-2.0
"""End to end on a CUDA device: a model with Llama-3-8B's layer shape (32 heads, 8 KV heads, d128, bf16;
random weights; 8 layers by default), run by transformers with

- torch: attn_implementation="sdpa" (torch's own choice per call),
- attnsel: attn_implementation="attnsel" (attnsel.transformers; the catalog, with --overlay merged),
- best: the same routing, each call run with the backend that timed fastest for its exact shape (timed once
  per shape on first sight, during the warm-up): the ceiling of any per-shape choice among SDPA's backends,
- best+ (with --families flex,eager): the same among SDPA's backends and those families' kernels
  (attnsel.kernels), which "attnsel" also runs where its overlay names them,

on prefill 1k / 4k / 8k (batch 1, a forward that keeps the last token's logits) and generate at batch 8
(1k prompt + 64 tokens) and 32 (2k + 16). Every repetition runs the modes back to back in a rotating
order, so drift reaches each alike; each figure is the median with its spread (p90 - p10 over the median),
and each ratio to torch is paired: the median of the repetitions' own ratios (each mode over torch in the
same rotation), with their p10-p90 range, so the host's drift between repetitions cancels.
--reps N multiplies the repetitions (9 per prefill, 5 per generate; 3 with --quick).
--compile adds the 4k prefill under torch.compile(fullgraph=True) for torch and attnsel. --overhead
times the routing's added cost per call on a tiny SDPA call (CPU-bound: what eager pays).

    python bench/e2e_model.py --overlay catalog/measured/X.json --json e2e.json [--compile] [--overhead]

Run it once per cuDNN mode (TORCH_CUDNN_SDPA_DEPRIORITIZED=1 in the environment for the other).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import torch

import attnsel.torch as at
import attnsel.transformers as atf

BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")


def deciles(samples):
    """median, p10 and p90 of `samples` (p10 rounds down, p90 up: a few samples give their extremes)."""
    s = sorted(samples)
    return statistics.median(s), s[int(0.1 * (len(s) - 1))], s[int(0.9 * (len(s) - 1) + 0.999)]


def spread(samples):
    med, p10, p90 = deciles(samples)
    return med, 100.0 * (p90 - p10) / med


def paired(mine, torch_samples):
    """The repetitions' own ratios mine[r] / torch[r] (timed in the same rotation): their median, p10, p90."""
    med, p10, p90 = deciles([a / b for a, b in zip(mine, torch_samples)])
    return {"median": round(med, 4), "p10": round(p10, 4), "p90": round(p90, 4)}


class BestPerShape:
    """Replaces attnsel.torch._routed_eager (what the "attnsel" layers call, eager or inside the compiled
    operator) while on: each call shape is timed once with every kernel that runs it (SDPA's backends, plus
    the --families kernels in the "best+" mode), and afterwards runs the fastest."""

    def __init__(self, extra):
        self.on = None  # None (attnsel's own routing), or the mode: "best" or "best+"
        self.real = at._routed_eager
        self.choice = {}
        sdpa = {b: at._RUNNERS[b] for b in BACKENDS}
        self.kernel_sets = {"best": sdpa, "best+": {**sdpa, **extra}}  # built once: every routed call reads one

    def __call__(self, q, k, v, mask, dropout, causal, scale, gqa):
        if self.on is None:
            return self.real(q, k, v, mask, dropout, causal, scale, gqa)
        key = (self.on, tuple(q.shape), tuple(k.shape), tuple(v.shape), q.dtype,
               None if mask is None else tuple(mask.shape), bool(causal), bool(gqa))
        kernels = self.kernel_sets[self.on]
        best = self.choice.get(key)
        if best is None:
            times = {}
            for b, run in kernels.items():
                try:
                    for _ in range(2):
                        run(q, k, v, mask, dropout, causal, scale, gqa)
                    times[b] = timed(lambda: [run(q, k, v, mask, dropout, causal, scale, gqa) for _ in range(5)])
                except Exception:  # a kernel that does not take the call (RuntimeError, ValueError)
                    sync()
            best = self.choice[key] = min(times, key=times.get)
        return kernels[best](q, k, v, mask, dropout, causal, scale, gqa)


DEVICE = "cuda"


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def build(layers: int, tiny: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    if tiny:  # a smoke test of this script on any machine
        cfg = LlamaConfig(vocab_size=128256, hidden_size=256, intermediate_size=512, num_hidden_layers=layers,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16384)
    else:
        cfg = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=layers,
                          num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=16384,
                          rope_theta=500000.0)
    torch.manual_seed(0)
    with torch.device(DEVICE):
        model = LlamaForCausalLM._from_config(cfg, attn_implementation="sdpa", dtype=torch.bfloat16).eval()
    model.generation_config.pad_token_id = 0
    return model


def set_mode(model, best: BestPerShape, mode: str) -> None:
    impl = "sdpa" if mode == "torch" else atf.NAME
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(impl)
    else:
        model.config._attn_implementation = impl
    best.on = mode if mode.startswith("best") else None


def timed(fn) -> float:
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    return (time.perf_counter() - t0) * 1000.0


def workloads(model, quick: bool, tiny: bool, reps: int = 1):
    g = torch.Generator(device=DEVICE).manual_seed(1)

    def ids(b, n):
        return torch.randint(1, 128000, (b, n // (64 if tiny else 1)), device=DEVICE, generator=g)

    out = []
    for n in (1024, 4096, 8192):
        x = ids(1, n)
        out.append((f"prefill {n // 1024}k", lambda x=x: model(x, logits_to_keep=1), 9 * reps))
    for b, n, new in ((8, 1024, 64), (32, 2048, 16)):
        x = ids(b, n)
        out.append((f"generate b{b} {n // 1024}k+{new}",
                    lambda x=x, new=new: model.generate(x, max_new_tokens=new, min_new_tokens=new, do_sample=False),
                    (3 if quick else 5) * reps))
    return out


def run(model, best, modes, work, results):
    with torch.no_grad():
        for name, fn, reps in work:
            for mode in modes:  # warm-up; "best" times its shapes here
                set_mode(model, best, mode)
                fn()
            samples = {m: [] for m in modes}
            for r in range(reps):
                order = modes[r % len(modes):] + modes[:r % len(modes)]
                for mode in order:
                    set_mode(model, best, mode)
                    samples[mode].append(timed(fn))
            row = {"workload": name}
            for m in modes:
                med, sp = spread(samples[m])
                row[m] = {"median_ms": round(med, 3), "spread_pct": round(sp, 1), "reps": reps}
                if m != "torch":
                    row[m]["to_torch"] = paired(samples[m], samples["torch"])
            results.append(row)
            print(f"{name:24s} " + "  ".join(f"{m} {row[m]['median_ms']:9.2f} ms ±{row[m]['spread_pct']:4.1f}%"
                                             for m in modes)
                  + "  " + "  ".join(f"{m}/torch {row[m]['to_torch']['median']:.3f} "
                                     f"[{row[m]['to_torch']['p10']:.3f}, {row[m]['to_torch']['p90']:.3f}]"
                                     for m in modes if m != "torch"), flush=True)


def overhead(results):
    """The routing's cost per call on a call too small for the GPU to matter (eager, CPU-bound)."""
    q = torch.randn(1, 8, 1, 64, device=DEVICE, dtype=torch.bfloat16)
    k = torch.randn(1, 8, 16, 64, device=DEVICE, dtype=torch.bfloat16)

    def plain():
        at._TORCH_SDPA(q, k, k)

    def routed():
        at.scaled_dot_product_attention(q, k, k)

    def kernel():
        s = at.select_sdpa(q, k, k)
        with at.use_backend(s):
            at._TORCH_SDPA(q, k, k)

    fns = {"torch": plain, "attnsel routed": routed, "select_sdpa + use_backend": kernel}
    samples = {n: [] for n in fns}
    for fn in fns.values():
        for _ in range(200):
            fn()
    for r in range(15):
        for n, fn in fns.items():
            samples[n].append(timed(lambda: [fn() for _ in range(2000)]) / 2000 * 1e3)
    base = statistics.median(samples["torch"])
    for n, s in samples.items():
        med, sp = spread(s)
        results.append({"call": n, "median_us": round(med, 2), "spread_pct": round(sp, 1),
                        "added_us": round(med - base, 2)})
        print(f"per call: {n:28s} {med:7.2f} us ±{sp:4.1f}%  (+{med - base:.2f} us over torch)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--overlay", help="a measured overlay to merge on the catalog attnsel routes by")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--compile", action="store_true", help="also the 4k prefill compiled (torch, attnsel)")
    ap.add_argument("--overhead", action="store_true", help="also the routing's cost per call")
    ap.add_argument("--quick", action="store_true", help="fewer generate repetitions")
    ap.add_argument("--reps", type=int, default=1, help="multiply the repetitions (9 per prefill, 5 per generate)")
    ap.add_argument("--tiny", action="store_true", help="a tiny model on the CPU: a smoke test of this script")
    ap.add_argument("--families", default="", help="kernel families beside SDPA's, comma-separated (flex, eager): "
                    "attnsel may route to them (an overlay that names them), and a \"best+\" mode adds them to "
                    "the per-shape best")
    a = ap.parse_args()
    # The best-per-shape timing tries every backend: torch warns for each one a call does not fit.
    warnings.filterwarnings("ignore", category=UserWarning)
    global DEVICE
    if a.tiny:
        DEVICE = "cpu"
    mode = "deprioritized" if os.environ.get("TORCH_CUDNN_SDPA_DEPRIORITIZED") == "1" else "preferred"
    doc = {"device": torch.cuda.get_device_name() if DEVICE == "cuda" else "cpu", "torch": torch.__version__, "cudnn": at.cudnn_version(),
           "cudnn_mode": mode, "layers": a.layers, "overlay": a.overlay, "rows": [], "compiled": [], "overhead": []}
    import attnsel.kernels as ak

    factories = {"flex": ak.flex_attention, "eager": ak.eager_attention}
    families = [f for f in a.families.split(",") if f]
    unknown = [f for f in families if f not in factories]
    if unknown:
        ap.error(f"--families: {', '.join(unknown)}: not one of {', '.join(factories)}")
    extra = {ak.FAMILIES[f]: factories[f]() for f in families}
    doc["families"] = families
    reg = at.registry()
    if extra:
        reg = ak.registry(reg)
    if a.overlay:
        reg.merge(a.overlay)
    atf.use_registry(reg, extra)
    print(f"{doc['device']}, torch {doc['torch']}, cuDNN {doc['cudnn']} ({mode}); {a.layers} layers; "
          f"overlay {a.overlay or 'none'}", flush=True)
    if a.overhead:
        overhead(doc["overhead"])
    model = build(a.layers, a.tiny)
    best = BestPerShape(extra)
    at._routed_eager = best
    modes = ["torch", "attnsel", "best"] + (["best+"] if extra else [])
    if a.reps < 1:
        ap.error("--reps: at least 1")
    doc["reps"] = a.reps
    run(model, best, modes, workloads(model, a.quick, a.tiny, a.reps), doc["rows"])
    if a.compile:
        x = torch.randint(1, 128000, (1, 4096 // (64 if a.tiny else 1)), device=DEVICE)
        compiled = {}
        for m in ("torch", "attnsel"):
            set_mode(model, best, m)
            torch._dynamo.reset()
            compiled[m] = torch.compile(model, fullgraph=True)
            t0 = time.perf_counter()
            with torch.no_grad():
                compiled[m](x, logits_to_keep=1)
            print(f"compiled {m}: first call {time.perf_counter() - t0:.1f} s", flush=True)
        samples = {m: [] for m in compiled}
        with torch.no_grad():
            for r in range(9):
                for m in (("torch", "attnsel") if r % 2 == 0 else ("attnsel", "torch")):
                    set_mode(model, best, m)  # each compiled graph guards on the model's implementation
                    samples[m].append(timed(lambda: compiled[m](x, logits_to_keep=1)))
        row = {"workload": "prefill 4k compiled"}
        for m, s in samples.items():
            med, sp = spread(s)
            row[m] = {"median_ms": round(med, 3), "spread_pct": round(sp, 1), "reps": len(s)}
        doc["compiled"].append(row)
        print(f"prefill 4k compiled: torch {row['torch']['median_ms']:.2f} ms ±{row['torch']['spread_pct']}%, "
              f"attnsel {row['attnsel']['median_ms']:.2f} ms ±{row['attnsel']['spread_pct']}% "
              f"({row['attnsel']['median_ms'] / row['torch']['median_ms']:.3f})", flush=True)
    doc["best_choices"] = {m: sorted({v for k, v in best.choice.items() if k[0] == m}) for m in ("best", "best+")}
    print(f"best per shape chose: {doc['best_choices']}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
