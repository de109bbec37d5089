# SPDX-License-Identifier: Apache-2.0
"""vLLM side of the differential oracle (docs/oracle.md).

Run by the oracle venv's python. The parent process reads the grid (tests/data/oracle/vllm_grid.json),
expands it into cases grouped by *world* (platform + installed components + environment), and forks one
worker per world from a parent that has imported the third-party packages once: vLLM resolves its
platform, the ROCm gfx target, the AITER switches and the presence of FlashInfer once per process, so
a world cannot change inside one.

Each worker makes vLLM's own platform detection answer the mocked platform before any vLLM module
binds `current_platform`, then asks vLLM's real selection entry points for every case:
  decoder, mla:  vllm.v1.attention.selector.get_attn_backend (-> <Platform>.get_attn_backend_cls)
  encoder (ViT): vllm.model_executor.models.vision._get_vit_attn_backend (-> get_vit_attn_backend)
  mla_prefill:   vllm.v1.attention.backends.mla.prefill.selector.get_mla_prefill_backend
"""
import argparse
import json
import os
import sys
import time
import types
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (OracleError, describe_exception, hide_modules, install_stand_ins, load_json,  # noqa: E402
                    by_world, need, product, sample, write_answers)

PINNED = "0.33.0"


# ----------------------------------------------------------------------------------------- grid
def worlds_of(grid: Dict[str, Any]) -> List[Dict[str, Any]]:
    w = need(grid, "worlds", dict, "grid")
    out = []
    for combo in product(w.get("cuda", {"arch": ["9.0"], "flashinfer": [True]}), "grid/worlds/cuda") if "cuda" in w else []:
        comps = ["flashinfer"] if combo["flashinfer"] else []
        # FlashInfer is usable when its package imports and its kernels can be had: flashinfer-cubin,
        # or nvcc and ninja on PATH (vllm/utils/flashinfer.py has_flashinfer). The cubin switch says so
        # without reading this machine's PATH.
        env = {"VLLM_HAS_FLASHINFER_CUBIN": "1"} if combo["flashinfer"] else {}
        out.append({"vendor": "cuda", "arch": str(combo["arch"]), "components": comps, "env": env,
                    "name": f"cuda-{combo['arch']}" + ("+flashinfer" if combo["flashinfer"] else "")})
    for family, flash_attn in (("rocm", False), ("rocm_flash_attn", True)):
        if family not in w:
            continue
        # rocm_flash_attn: the upstream flash-attn package installed too (vLLM's ROCm images build it),
        # which vLLM's ROCm FlashAttention paths import (v1/attention/backends/fa_utils.py).
        for combo in product(w[family], f"grid/worlds/{family}"):
            mode = combo["aiter"]
            env = {"VLLM_ROCM_USE_AITER": "0"}
            installed = mode != "absent"
            if mode == "on":
                env = {"VLLM_ROCM_USE_AITER": "1"}
            elif mode == "on_no_mha":
                env = {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MHA": "0"}
            elif mode == "on_no_mla":
                env = {"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MLA": "0"}
            elif mode not in ("absent", "installed_off"):
                raise OracleError(f"grid/worlds/{family}/aiter: unknown value '{mode}' "
                                  "(absent, installed_off, on, on_no_mha, on_no_mla)")
            comps = (["aiter"] if installed else []) + (["flash_attn"] if flash_attn else [])
            out.append({"vendor": "rocm", "arch": combo["arch"], "components": comps, "env": env, "aiter": mode,
                        "name": f"rocm-{combo['arch']}-aiter_{mode}" + ("+flash_attn" if flash_attn else "")})
    if "xpu" in w:
        out.append({"vendor": "xpu", "arch": None, "components": [], "env": {}, "name": "xpu"})
    if "cpu" in w:
        for combo in product(w["cpu"], "grid/worlds/cpu"):
            isa = combo["isa"]
            if isa not in CPU_ISAS:
                raise OracleError(f"grid/worlds/cpu/isa: unknown value '{isa}' ({', '.join(CPU_ISAS)})")
            out.append({"vendor": "cpu", "arch": None, "components": CPU_ISAS[isa], "env": {}, "isa": isa,
                        "name": f"cpu-{isa}"})
    return out


# The x86 ISA levels vLLM's CPU platform reads (torch.cpu._is_avx512_supported / _is_amx_tile_supported),
# as attnsel's detected components.
CPU_ISAS = {"avx2": ["cpu_avx2"], "avx512": ["cpu_avx2", "cpu_avx512"], "amx": ["cpu_avx2", "cpu_avx512", "cpu_amx"]}

DOMAIN_OF = {"decoder": "decoder", "decoder_attn_type": "decoder", "decoder_override": "decoder",
             "decoder_batch_invariant": "decoder", "linear": "linear",
             "mla": "decoder", "mla_override": "decoder", "encoder": "encoder", "mla_prefill": "mla_prefill"}


def cases_of(grid: Dict[str, Any]) -> List[Dict[str, Any]]:
    if grid.get("engine") != "vllm":
        raise OracleError("grid: 'engine' must be \"vllm\"")
    domains = need(grid, "domains", dict, "grid")
    cases = []
    for world in worlds_of(grid):
        for group, axes in domains.items():
            if group not in DOMAIN_OF:
                raise OracleError(f"grid/domains: unknown group '{group}' ({', '.join(DOMAIN_OF)})")
            for q in product(axes, f"grid/domains/{group}"):
                cases.append({"id": f"vllm/{world['name']}/{group}/{len(cases)}", "engine": "vllm",
                              "world": world, "group": group, "domain": DOMAIN_OF[group], "query": q})
    return cases


# --------------------------------------------------------------------------------------- worker
def _setup_world(world: Dict[str, Any]):
    """Makes this process look like `world` to vLLM; returns the vLLM modules the asks need."""
    for k, v in world["env"].items():
        os.environ[k] = v
    vendor = world["vendor"]
    comps = set(world["components"])
    if "flashinfer" not in comps:
        hide_modules(["flashinfer"])
    if vendor == "rocm":
        install_stand_ins([c for c in ("aiter", "flash_attn") if c in comps])
        if "flash_attn" not in comps:
            hide_modules(["flash_attn"])
    if vendor == "xpu":
        install_stand_ins(["vllm_xpu_kernels"])
    # amdsmi would probe a real AMD device. pynvml stays: FlashInfer imports it, and vLLM's CUDA platform
    # falls back to its NVML-free class when nvmlInit fails, as on a machine without the driver.
    hide_modules(["amdsmi"])

    import torch
    from triton.backends import backends as triton_backends

    # vllm.triton_utils disables Triton unless exactly one GPU driver is active (HAS_TRITON); on the
    # engines' GPU machines the vendor's driver is.
    want = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel"}.get(vendor)
    for name, b in triton_backends.items():
        if b.driver is not None:
            b.driver.is_active = staticmethod((lambda active: (lambda: active))(name == want))

    import vllm.platforms as P
    from vllm.platforms.interface import DeviceCapability

    if vendor in ("cuda", "rocm"):
        # Some backend modules allocate a device workspace when imported (mla/cutlass_mla.py: 128 MB on
        # "cuda"). With no driver that raises where the engine would select: such tensors live on the
        # meta device instead (shape and dtype, no memory).
        for factory in ("empty", "zeros", "ones", "full"):
            setattr(torch, factory, _meta_for_cuda(getattr(torch, factory)))
    if vendor == "cuda":
        major, minor = (int(x) for x in world["arch"].split("."))
        cap = DeviceCapability(major=major, minor=minor)
        torch.cuda.get_device_capability = lambda device=None: (major, minor)
        cuda_props = types.SimpleNamespace(name=f"oracle sm_{major}{minor}", major=major, minor=minor,
                                        total_memory=80 << 30, multi_processor_count=132)
        torch.cuda.get_device_properties = lambda device=None: cuda_props
        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
        from vllm.platforms import cuda as cuda_mod

        plat_cls = cuda_mod.CudaPlatform
        plat_cls.get_device_capability = classmethod(lambda cls, device_id=0: cap)
        plat_cls.get_device_name = classmethod(lambda cls, device_id=0: f"oracle sm_{major}{minor}")
    elif vendor == "rocm":
        arch = world["arch"]
        props = types.SimpleNamespace(gcnArchName=arch, name=f"oracle {arch}", major=0, minor=0,
                                   total_memory=64 << 30, multi_processor_count=304)
        torch.cuda.get_device_properties = lambda device=None: props
        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
        torch.version.hip = "7.0.0"
        from vllm.platforms import rocm as rocm_mod

        plat_cls = rocm_mod.RocmPlatform
        plat_cls.get_device_name = classmethod(lambda cls, device_id=0: f"oracle {arch}")
    elif vendor == "xpu":
        torch.xpu.is_available = lambda: True
        torch.xpu.get_device_name = lambda device=None: "oracle Intel GPU"
        from vllm.platforms import xpu as xpu_mod

        plat_cls = xpu_mod.XPUPlatform
    elif vendor == "cpu":
        # Both ISA probes read the host's CPU: answer the world's, never this machine's.
        components = set(world["components"])
        torch.cpu._is_amx_tile_supported = lambda: "cpu_amx" in components
        torch.cpu._is_avx512_supported = lambda: "cpu_avx512" in components
        from vllm.platforms import cpu as cpu_mod

        plat_cls = cpu_mod.CpuPlatform
    else:
        raise OracleError(f"unknown vendor {vendor}")
    # The platform vLLM's own detection would have resolved (vllm/platforms/__init__.py keeps it
    # in _current_platform); set before any module runs `from vllm.platforms import current_platform`.
    P._current_platform = plat_cls()
    return torch


def _meta_for_cuda(factory):
    def make(*args, device=None, **kwargs):
        if device is not None and str(device).startswith("cuda"):
            device = "meta"
        return factory(*args, device=device, **kwargs)

    return make


DTYPES = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32"}


def _answer_from(fn) -> Dict[str, Any]:
    try:
        return {"backend": fn()}
    except (ImportError, OSError) as e:
        return {**describe_exception(e), "import_error": True}
    except Exception as e:  # the engine's own refusal: ValueError, AssertionError, NotImplementedError...
        return describe_exception(e)


def run_worker(world: Dict[str, Any], cases: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Runs in a forked worker of its own: makes this process `world`, then asks every case."""
    t0 = time.time()
    try:
        torch = _setup_world(world)
        import vllm
        from vllm.config import AttentionConfig, CacheConfig, VllmConfig, set_current_vllm_config
        from vllm.v1.attention.selector import (_cached_get_attn_backend, _cached_get_mamba_attn_backend,
                                                get_attn_backend, get_mamba_attn_backend)
        from vllm.v1.attention.backends.registry import MambaAttentionBackendEnum
        from vllm.model_executor.models.vision import _get_vit_attn_backend
        from vllm.v1.attention.backends.registry import AttentionBackendEnum
        from vllm.v1.attention.backends.mla.prefill import selector as mla_prefill_selector
        from vllm.v1.attention.backends.mla.prefill.registry import MLAPrefillBackendEnum  # noqa: F401
    except Exception as e:  # the world cannot be set up: every case is not asked, with the reason
        reason = f"world setup failed: {type(e).__name__}: {str(e)[:300]}"
        return [{**c, "answer": {"not_asked": reason}} for c in cases]
    if vllm.__version__ != PINNED:
        raise OracleError(f"vllm {vllm.__version__} is installed, the oracle pins {PINNED}")
    setup_s = time.time() - t0

    configs: Dict[Any, Any] = {}

    def vllm_config(override, block_size, kv_cache_dtype, mla_prefill=None):
        key = (override, block_size, kv_cache_dtype, mla_prefill)
        if key not in configs:
            att = AttentionConfig(backend=override) if mla_prefill is None else \
                AttentionConfig(mla_prefill_backend=override)
            cache = CacheConfig(block_size=block_size) if block_size else CacheConfig()
            if kv_cache_dtype:
                cache.cache_dtype = kv_cache_dtype
            configs[key] = VllmConfig(attention_config=att, cache_config=cache)
        return configs[key]

    out = []
    for c in cases:
        q = c["query"]
        group = c["group"]
        override = q.get("override")
        dtype = getattr(torch, DTYPES[q["dtype"]])
        # Batch invariance is a process switch in vLLM (VLLM_BATCH_INVARIANT), read as a selection runs
        # (envs is not cached outside the engine's start-up); attnsel states it as a feature. Set for
        # every case, so no case inherits the previous one's.
        if "batch_invariant" in q.get("features", []):
            os.environ["VLLM_BATCH_INVARIANT"] = "1"
        else:
            os.environ.pop("VLLM_BATCH_INVARIANT", None)
        if group in ("decoder", "decoder_attn_type", "decoder_override", "decoder_batch_invariant", "mla",
                     "mla_override"):
            is_mla = group.startswith("mla")
            feats = set(q.get("features", []))

            def ask():
                cfg = vllm_config(override, q.get("block_size"), q["kv_cache_dtype"])
                with set_current_vllm_config(cfg):
                    _cached_get_attn_backend.cache_clear()
                    b = get_attn_backend(
                        q["head_size"], dtype, q["kv_cache_dtype"], use_mla=is_mla,
                        has_sink="sinks" in feats, use_sparse=bool(q.get("sparse", False)),
                        use_mm_prefix="mm_prefix" in feats, attn_type=q.get("attn_type", "decoder"),
                        num_heads=q.get("num_heads"), has_sliding_window="sliding_window" in feats)
                    return b.get_name()
        elif group == "linear":
            def ask():
                # A mamba-like layer's backend comes from its mamba_type alone (get_mamba_attn_backend);
                # the forced decoder backend is set to show that nothing reads it.
                with set_current_vllm_config(vllm_config(override, None, "auto")):
                    _cached_get_mamba_attn_backend.cache_clear()
                    return get_mamba_attn_backend(MambaAttentionBackendEnum[q["kind"]]).get_name()
        elif group == "encoder":
            def ask():
                be = AttentionBackendEnum[override] if override else None
                return _get_vit_attn_backend(q["head_size"], dtype, attn_backend_override=be).name
        elif group == "mla_prefill":
            nope, rope, v = q["dims"]

            def ask():
                att = AttentionConfig(mla_prefill_backend=override)
                cfg = types.SimpleNamespace(
                    model_config=types.SimpleNamespace(dtype=dtype, hf_text_config=types.SimpleNamespace(
                        qk_nope_head_dim=nope, qk_rope_head_dim=rope, v_head_dim=v)),
                    attention_config=att)
                mla_prefill_selector._auto_select_mla_prefill_backend.cache_clear()
                return mla_prefill_selector.get_mla_prefill_backend(cfg).get_name()
        else:
            raise OracleError(f"unknown group {group}")
        ans = _answer_from(ask)
        out.append({**c, "answer": ans})
    sys.stderr.write(f"[vllm] world {world['name']}: {len(cases)} cases, setup {setup_s:.1f}s, "
                     f"total {time.time() - t0:.1f}s\n")
    return out


# --------------------------------------------------------------------------------------- parent
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sample", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        if args.sample is not None and args.sample < 1:
            raise OracleError(f"--sample {args.sample}: expected a positive number of cases")
        grid = load_json(args.grid, "grid")
        cases = sample(cases_of(grid), args.sample)
        log_dir = os.path.join(os.path.dirname(os.path.abspath(args.out)), "vllm_logs")
        os.makedirs(log_dir, exist_ok=True)
        answers = run_all(by_world(cases), args.jobs, log_dir)
        write_answers(args.out, "vllm", PINNED, args.grid, answers)
        return 0
    except OracleError as e:
        sys.stderr.write(f"engine_vllm: error: {e}\n")
        return 2


# Third-party packages vLLM imports whatever the world: imported once in the parent, before any
# fork, they cost one import instead of one per world. Nothing of vLLM's is imported here: vLLM binds
# the platform, the ROCm arch and the AITER switches at import, so each world imports it afresh.
PREWARM = ("torch", "triton", "transformers", "openai", "sympy", "aiohttp", "numpy", "pydantic", "jinja2", "psutil")


def run_all(by_world: Dict[str, List[Dict[str, Any]]], jobs: int, log_dir: str) -> List[Dict[str, Any]]:
    """One forked worker per world, `jobs` at a time; a worker's answers come back through a pipe, and
    what vLLM prints goes to `log_dir`/<world>.log."""
    import importlib
    import threading

    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    # tvm_ffi (FlashInfer's FFI) compiles a torch DLPack extension with the host's compiler at import,
    # once per process: seconds of CPU a world, and nothing the selection reads.
    os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
    for name in PREWARM:
        try:
            importlib.import_module(name)
        except Exception:  # a package that does not import here is left to the worker to report
            pass
    pending = list(by_world.items())
    running: List[Any] = []
    results: Dict[str, List[Dict[str, Any]]] = {}
    while pending or running:
        while pending and len(running) < max(1, jobs):
            name, cs = pending.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: answers to the pipe, vLLM's own printing to the world's log
                os.close(r)
                real_err = os.fdopen(os.dup(2), "w")
                log = os.open(os.path.join(log_dir, f"{name}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(log, 1)
                os.dup2(log, 2)
                sys.stderr = real_err
                import warnings

                warnings.simplefilter("ignore")  # vLLM's and torch's deprecation notes: not answers
                code = 0
                try:
                    with os.fdopen(w, "w", encoding="utf-8") as out:
                        json.dump(run_worker(cs[0]["world"], cs), out)
                except OracleError as e:
                    sys.stderr.write(f"engine_vllm: error: {e}\n")
                    code = 2
                except BaseException as e:  # noqa: BLE001 - reported as the world's failure
                    sys.stderr.write(f"engine_vllm: world {name} failed: {type(e).__name__}: {e}\n")
                    code = 1
                sys.stderr.flush()
                os._exit(code)
            os.close(w)
            box: Dict[str, Any] = {}

            def read(fd=r, box=box):
                with os.fdopen(fd, encoding="utf-8") as f:
                    box["out"] = f.read()

            t = threading.Thread(target=read)
            t.start()
            running.append((name, cs, pid, t, box))
        time.sleep(0.05)
        for item in list(running):
            name, cs, pid, t, box = item
            if t.is_alive():
                continue
            t.join()
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            running.remove(item)
            if code == 2:
                raise OracleError(f"world {name}: bad input (above)")
            if code != 0 or not box.get("out"):
                results[name] = [{**c, "answer": {"not_asked": f"the worker for {name} exited {code}"}} for c in cs]
                sys.stderr.write(f"engine_vllm: world {name}: the worker exited {code}; its log: "
                                 f"{os.path.join(log_dir, name + '.log')}\n")
            else:
                results[name] = json.loads(box["out"])
    return [c for name in by_world for c in results[name]]


if __name__ == "__main__":
    sys.exit(main())
