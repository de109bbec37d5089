# SPDX-License-Identifier: Apache-2.0
"""vLLM 0.33.0's rules beyond one layer against attnsel's model plan (scripts/oracle.sh).

Run by the oracle venv's python, with the stand-in libcuda of scripts/oracle.sh. Two checks, each run in
vLLM itself (nothing of either rule is restated here):

hybrid  The KV-cache block size of hybrid (attention + mamba / gated delta-rule) models. In an sm90
        world (engine_vllm's), for each hybrid config (the fixtures vLLM's ModelConfig calls is_hybrid,
        the two inline checkpoints below, and transformers' default config of each Mamba-2 family), each
        tensor-parallel size, KV-cache dtype and prefix-caching switch, it builds vLLM's real
        VllmConfig (its model hooks run), builds the whole model on the meta device with
        initialize_model (its Attention and mamba layers select and register), and calls
        update_block_size_for_backend as vLLM's executors do after loading. attnsel.plan_model must give
        the same block size.
gemma4  The Gemma 4 rule of model_executor/models/config.py (Gemma4Config): in one world per platform
        kind, vLLM's VllmConfig is built for the Gemma 4 fixture with no backend forced, and the backend
        it sets (attention_config.backend) must be the one attnsel's plan forces (its model rule's).

Exit: 0 when every case agrees; 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "tests", "data", "model_configs")
sys.path.insert(0, HERE)

# Two public checkpoints' config.json values (ai21labs/Jamba-v0.1, nvidia/NVIDIA-Nemotron-Nano-9B-v2),
# the keys their model classes read.
INLINE = {
    "jamba-v0.1": {
        "architectures": ["JambaForCausalLM"], "model_type": "jamba", "torch_dtype": "bfloat16",
        "attn_layer_offset": 4, "attn_layer_period": 8, "expert_layer_offset": 1, "expert_layer_period": 2,
        "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "num_experts": 16, "num_experts_per_tok": 2, "mamba_conv_bias": True,
        "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_dt_rank": 256, "mamba_expand": 2,
        "mamba_proj_bias": False, "max_position_embeddings": 262144, "rms_norm_eps": 1e-6,
        "vocab_size": 65536, "hidden_act": "silu", "sliding_window": None, "tie_word_embeddings": False,
        "use_mamba_kernels": True, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2},
    "nemotron-nano-9b-v2": {
        "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "torch_dtype": "bfloat16",
        "hidden_size": 4480, "intermediate_size": 15680, "num_hidden_layers": 56,
        "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "attention_head_dim": 128,
        "mamba_num_heads": 128, "mamba_head_dim": 80, "n_groups": 8, "ssm_state_size": 128,
        "conv_kernel": 4, "chunk_size": 128, "mamba_hidden_act": "silu", "mlp_hidden_act": "relu2",
        "use_conv_bias": True, "use_bias": False, "mamba_proj_bias": False, "mlp_bias": False,
        "attention_bias": False, "residual_in_fp32": False, "rms_norm_eps": 1e-5,
        "layer_norm_epsilon": 1e-5, "max_position_embeddings": 131072, "vocab_size": 131072,
        "time_step_rank": 256, "time_step_min": 0.001, "time_step_max": 0.1, "time_step_floor": 1e-4,
        "tie_word_embeddings": False, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 12},
}
# Families whose transformers default config is checked too (each one's Mamba-2 keys differ).
DEFAULT_FAMILIES = ("granitemoehybrid", "zamba2", "falcon_h1")
SM90 = {"vendor": "cuda", "arch": "9.0", "components": ["flashinfer"], "env": {"VLLM_HAS_FLASHINFER_CUBIN": "1"},
        "name": "cuda-9.0+flashinfer"}
GEMMA4_WORLDS = [
    {"vendor": "cuda", "arch": a, "components": ["flashinfer"], "env": {"VLLM_HAS_FLASHINFER_CUBIN": "1"},
     "name": f"cuda-{a}+flashinfer"} for a in ("8.0", "8.9", "9.0", "10.0", "12.0")
] + [
    {"vendor": "rocm", "arch": "gfx942", "components": ["aiter", "flash_attn"], "env": {"VLLM_ROCM_USE_AITER": "0"},
     "name": "rocm-gfx942+stock"},
    {"vendor": "xpu", "arch": None, "components": [], "env": {}, "name": "xpu"},
    {"vendor": "cpu", "arch": None, "components": ["cpu_avx2", "cpu_avx512"], "env": {}, "name": "cpu-avx512"},
]


def configs(hybrid_only: bool):
    """(name, config dict) of the fixtures, the inline checkpoints and the families' defaults."""
    out = [(f[:-5], json.load(open(os.path.join(FIXTURES, f)))) for f in sorted(os.listdir(FIXTURES))
           if f.endswith(".json")]
    if hybrid_only:
        out += list(INLINE.items())
        from transformers import AutoConfig

        for family in DEFAULT_FAMILIES:
            cfg = AutoConfig.for_model(family).to_dict()
            if not cfg.get("torch_dtype"):  # the class default names none: run it in bfloat16, both sides
                cfg["torch_dtype"] = "bfloat16"
            out.append((f"{family}(transformers default)", cfg))
    return out


def write_dir(cfg) -> str:
    d = tempfile.mkdtemp(prefix="plan-rules-")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


# ------------------------------------------------------------------------------------ vLLM's side
def setup(world):
    """Makes this process `world` to vLLM (engine_vllm's way) and lets a model be built on meta."""
    for k, v in {"VLLM_LOGGING_LEVEL": "ERROR", "HF_HUB_OFFLINE": "1", "TVM_FFI_DISABLE_TORCH_C_DLPACK": "1",
                 "VLLM_CACHE_ROOT": tempfile.mkdtemp(prefix="plan-rules-")}.items():
        os.environ.setdefault(k, v)
    import common
    import engine_vllm

    common.install_stand_ins(["torchvision"])  # Qwen3.5's module imports transformers' image processors
    if world["vendor"] != "cuda":
        # vllm_flash_attn is built for CUDA alone (cmake/external_projects/vllm_flash_attn.cmake): a ROCm,
        # XPU or CPU install has no flash_attn_interface, which this (CUDA) wheel's files would supply.
        common.hide_modules(["vllm.vllm_flash_attn.flash_attn_interface"])
    torch = engine_vllm._setup_world(world)
    import vllm.model_executor.models.registry as registry

    registry._run_in_subprocess = lambda fn: fn()  # model inspection in this (mocked) process
    if world["vendor"] == "cuda":
        import triton
        from triton.backends.compiler import GPUTarget

        # FLA's module-level probe asks Triton's active driver for its target (no libcuda here).
        props = {"max_shared_mem": 232448, "multiprocessor_count": 132, "warpSize": 32}
        drv = types.SimpleNamespace(get_current_target=lambda: GPUTarget("cuda", 90, 32), get_current_device=lambda: 0,
                                    utils=types.SimpleNamespace(get_device_properties=lambda i: props))
        triton.runtime.driver._default = triton.runtime.driver._active = drv
        import vllm.model_executor.layers.fused_moe.runner.shared_experts as shared_experts
        from vllm.platforms import current_platform

        shared_experts.aux_stream = lambda: None  # a CUDA stream cannot be made without a driver
        plat = type(current_platform)
        plat.device_count = classmethod(lambda cls: 8)
        plat.current_device = classmethod(lambda cls: torch.device("meta"))
    return torch


def vllm_block(torch, model_dir, tp, cache_dtype, prefix_caching):
    """vLLM's attention block size for the hybrid model in `model_dir`."""
    from vllm.config import (AttentionConfig, CacheConfig, ModelConfig, ParallelConfig, VllmConfig,
                             set_current_vllm_config)
    from vllm.distributed import parallel_state as ps
    from vllm.model_executor.model_loader.utils import initialize_model
    from vllm.platforms import current_platform
    from vllm.utils.torch_utils import set_default_torch_dtype

    mc = ModelConfig(model=model_dir, tokenizer=model_dir, skip_tokenizer_init=True)
    vc = VllmConfig(model_config=mc, attention_config=AttentionConfig(),
                    cache_config=CacheConfig(cache_dtype=cache_dtype, enable_prefix_caching=prefix_caching),
                    parallel_config=ParallelConfig(tensor_parallel_size=tp))
    with set_current_vllm_config(vc):
        if ps._TP is None:
            ps.init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                            distributed_init_method=f"tcp://127.0.0.1:{29500 + os.getpid() % 1000}")
            ps.initialize_model_parallel(1, 1)
        ps._TP.world_size = tp  # rank 0 of `tp`: layers shard as there (no collective runs while built)
        with set_default_torch_dtype(mc.dtype), torch.device("meta"):  # as BaseModelLoader.load_model
            initialize_model(vllm_config=vc)
        current_platform.update_block_size_for_backend(vc)  # as the executors do after load_model
    return vc.cache_config.block_size


def worker(check: str, world) -> list:
    torch = setup(world)
    from vllm.config import AttentionConfig, ModelConfig, VllmConfig

    out = []
    for name, cfg in configs(check == "hybrid"):
        d = write_dir(cfg)
        try:
            mc = ModelConfig(model=d, tokenizer=d, skip_tokenizer_init=True)
        except Exception as e:  # a fixture vLLM cannot read here (an encoder-decoder): neither check's,
            if cfg.get("model_type", "").startswith("gemma4"):  # but the Gemma 4 one must be read
                out.append({"model": name, "config": cfg, "world": world,
                            "vllm_error": f"{type(e).__name__}: {str(e)[:300]}"})
            continue
        if check == "hybrid":
            if not mc.is_hybrid:
                continue
            for tp in (1, 2):
                for kv in ("auto", "fp8"):
                    for pc in (True, False):
                        case = {"model": name, "config": cfg, "tp": tp, "kv": kv, "prefix_caching": pc}
                        try:
                            case["vllm"] = vllm_block(torch, d, tp, kv, pc)
                        except Exception as e:
                            case["vllm_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                        out.append(case)
        elif cfg.get("model_type", "").startswith("gemma4"):
            vc = VllmConfig(model_config=mc, attention_config=AttentionConfig())  # Gemma4Config runs here
            backend = vc.attention_config.backend
            out.append({"model": name, "config": cfg, "world": world,
                        "vllm": backend.name if backend is not None else None})
    return out


# ---------------------------------------------------------------------------------- attnsel's side
def platform_of(attnsel, reg, world):
    """The world as attnsel's platform, with the stock install (as `attnsel plan --platform` assumes)."""
    p = attnsel.Platform(world["vendor"], world["arch"], world["components"])
    return reg.with_stock(p)


def compare(check: str, cases: list) -> list:
    import attnsel

    reg = attnsel.builtin_catalog("vllm@0.33.0")
    with open(os.path.join(HERE, "..", "..", "catalog", "vllm@0.33.0.json")) as f:
        forces = {r["id"]: r.get("force") for r in json.load(f).get("model_rules", [])}
    problems = []
    for c in cases:
        label = f"{c['model']}" + (f" tp={c['tp']} kv={c['kv']} prefix_caching={c['prefix_caching']}"
                                   if check == "hybrid" else f" on {c['world']['name']}")
        if "vllm_error" in c:
            problems.append(f"{label}: vLLM failed: {c['vllm_error']}")
            continue
        world = SM90 if check == "hybrid" else c["world"]
        p = platform_of(attnsel, reg, world)
        if check == "hybrid":
            query = attnsel.Query.from_model_config(c["config"], tp=c["tp"], kv_cache_dtype=c["kv"])
            plan = attnsel.plan_model(reg, c["config"], p, query=query, tp=c["tp"], prefix_caching=c["prefix_caching"])
            ours = plan.block_size
            if not any(g.kind not in ("linear", "encoder") for g in plan.groups):
                # No attention layer (transformers' default Granite 4 hybrid config): the plan has no KV-cache
                # block to size. Not compared; vLLM's figure (its CacheConfig default, never raised) is kept.
                c["attnsel"] = None
                c["not_compared"] = "no attention layer"
                print(f"{label}: vLLM {c['vllm']}, attnsel has no attention layer to size (not compared)")
                continue
        else:
            plan = attnsel.plan_model(reg, c["config"], p)
            ours = forces.get(plan.model_rule) if plan.model_rule else None
        c["attnsel"] = ours
        print(f"{label}: vLLM {c['vllm']}, attnsel {ours}")
        if ours != c["vllm"]:
            problems.append(f"{label}: vLLM {c['vllm']}, attnsel {ours}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the cases and answers here (JSON)")
    ap.add_argument("--worker", nargs=2, metavar=("CHECK", "WORLD_JSON"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:  # one world's vLLM answers, as JSON on stdout (vLLM binds its platform once a process)
        json.dump(worker(a.worker[0], json.loads(a.worker[1])), sys.stdout)
        return 0
    report, problems = {}, []
    for check, worlds in (("hybrid", [SM90]), ("gemma4", GEMMA4_WORLDS)):
        cases = []
        for world in worlds:
            run = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", check, json.dumps(world)],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                problems.append(f"{check} on {world['name']}: vLLM's side failed: {run.stderr.strip()[-600:]}")
                continue
            cases += json.loads(run.stdout)
        problems += compare(check, cases)
        report[check] = [{k: v for k, v in c.items() if k != "config"} for c in cases]
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"cases": report, "problems": problems}, f, indent=1)
    total = sum(len(v) for v in report.values())
    skipped = sum(1 for v in report.values() for c in v if "not_compared" in c)
    print(f"plan_rules: {total} cases, {total - skipped - len(problems)} agree, {skipped} not compared "
          f"(no attention layer), {len(problems)} disagree")
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
