# SPDX-License-Identifier: Apache-2.0
"""SGLang side of the differential oracle (docs/oracle.md, section SGLang).

Run by the oracle venv's python. The parent process reads the grid (tests/data/oracle/sglang_grid.json),
expands it into cases grouped by *world* (vendor + arch + CUDA runtime + engine switches), writes one
tiny Hugging Face checkpoint directory (config.json only) per model shape, imports the platform-neutral
libraries (PREIMPORT: torch, transformers...) once and forks one worker per world: SGLang evaluates its platform
probes (`is_hip()`, `_is_cuda`, `_is_cpu_amx_available`, `_use_aiter`...) at import time, so a world
cannot change inside one process.

Each worker makes torch answer the mocked machine before any SGLang module is imported, then asks
SGLang's real code:
  decoder (MHA, MLA, DSA; default and forced): the command line is parsed by SGLang's own parser
      (ServerArgs.add_cli_args + ServerArgs.from_cli_args, the body of server_args.prepare_server_args)
      and resolved by ServerArgs.resolve_once (-> arg_groups/pipeline.py run_resolution_pipeline: the
      model overrides, handle_attention_backend_compatibility with _attention_backend_default ->
      get_default_attn_backend, the page/kv-dtype passes, _attention_backend_platform_fallbacks...);
      the answer is the phase's backend, arg_groups/model_override_base.py attention_backends_of.
  encoder (vision): layers/attention/vision.py VisionAttention._determine_attention_backend, with
      --mm-attention-backend parsed by the same parser.
  linear (GDN, KDA and mamba2 layers of hybrid models): the same parse and resolve_once, then what a
      model runner does: the runtime FlashInfer prefill default (gdn_backend.py / kda_backend.py
      flashinfer_*_prefill_default, on a stand-in runner holding the resolved state dtype), the phase
      kernels (layers/attention/linear/utils.py resolve_linear_attn_backends) and the kernel dispatcher's
      own refusals (GDNKernelDispatcher / KDAKernelDispatcher, their kernel classes replaced by empty
      stand-ins: building a kernel needs a GPU). Mamba layers read --mamba-backend
      (resolution_result mamba_backend) for decode; their prefill scan is Triton whatever it says.
"""
import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
import types
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (OracleError, describe_exception, hide_modules, install_stand_ins, load_json,  # noqa: E402
                    by_world, need, product, sample, write_answers)

PINNED = "0.5.23"

# Packages SGLang imports at module level that the venv does not hold (sglang is installed --no-deps):
# served as stand-in modules. None of them takes part in backend resolution: IPython (sglang.utils
# display helpers), torchvision and gguf (model-loading imports), pynvml (flashinfer.utils imports it;
# SGLang's own NVML probe is sent to its torch fallback, see _setup_world), sgl_kernel (SGLang's
# compiled kernels, a CUDA/ROCm/CPU binary wheel).
STAND_INS = ["IPython", "torchvision", "gguf", "pynvml", "sgl_kernel"]
# vLLM shares the venv but is no SGLang dependency: hidden so SGLang's optional vLLM paths stay off.
HIDDEN = ["vllm", "amdsmi"]

# Libraries without platform probes at import, imported by the parent before it forks the workers
# (torch itself only reads the machine when asked; the workers then mock its answers).
PREIMPORT = ("torch", "transformers", "transformers.models.llama.configuration_llama",
             "transformers.models.deepseek_v2.configuration_deepseek_v2", "numpy", "sympy", "networkx", "mpmath",
             "aiohttp", "openai", "requests", "jinja2", "yaml", "zmq", "pydantic", "msgspec", "fsspec",
             "huggingface_hub", "einops", "safetensors", "httpx", "uvloop", "fastapi", "orjson", "psutil")

# sgl_kernel CPU ops SGLang reads at import in an AMX world (see _setup_world).
AMX_OPS = ("convert_weight_packed", "flash_attn_varlen_func", "apply_rotary_pos_emb_cpu")
_LIBS: List[Any] = []  # keeps the torch.library registrations alive

# The linear kernel classes the dispatchers build (module, class): replaced by an empty stand-in, since
# building a real kernel needs a GPU (and, for some, packages the venv lacks: cutlass, helion, flash_kda).
LINEAR_KERNELS = (("gdn_triton", "TritonGDNKernel"), ("gdn_cutedsl", "CuteDSLGDNKernel"),
                  ("gdn_flashinfer", "FlashInferGDNKernel"), ("kda_triton", "TritonKDAKernel"),
                  ("kda_helion", "HelionKDAKernel"), ("kda_cutedsl", "CuteDSLKDAKernel"),
                  ("kda_flashinfer", "FlashInferKDAKernel"), ("kda_flashinfer_prefill", "FlashInferKDAPrefillKernel"),
                  ("kda_flashkda", "FlashKDAKernel"), ("kda_nvidia", "NvidiaKDAKernel"), ("kda_ptx", "PtxKDAKernel"))
# sgl_kernel CPU ops gdn_backend binds at import in a CPU world (defined, never run).
GDN_CPU_OPS = ("fused_gdn_gating_cpu", "fused_sigmoid_gating_delta_rule_update_cpu", "fused_rmsnorm_gated_cpu")

# The gfx target -> torch.cuda.get_device_capability() of ROCm's torch (major, minor of the gfx name).
ROCM_CAPABILITY = {"gfx90a": (9, 0), "gfx942": (9, 4), "gfx950": (9, 5), "gfx1100": (11, 0), "gfx1201": (12, 0)}


# ----------------------------------------------------------------------------------------- grid
def _blocks(spec: Any, where: str) -> List[Dict[str, Any]]:
    """A world kind is one block of axes or a list of blocks (each expanded as a product)."""
    blocks = spec if isinstance(spec, list) else [spec]
    out = []
    for i, b in enumerate(blocks):
        out += list(product(b, f"{where}/{i}" if isinstance(spec, list) else where))
    return out


def worlds_of(grid: Dict[str, Any]) -> List[Dict[str, Any]]:
    w = need(grid, "worlds", dict, "grid")
    out: List[Dict[str, Any]] = []
    for kind in w:
        if kind not in ("cuda", "rocm", "cpu", "xpu"):
            raise OracleError(f"grid/worlds: unknown kind '{kind}' (cuda, rocm, cpu, xpu)")
    for kind in ("cuda", "rocm"):
        for combo in _blocks(w.get(kind, []), f"grid/worlds/{kind}"):
            if "arch" not in combo:
                raise OracleError(f"grid/worlds/{kind}: missing axis 'arch'")
    for combo in _blocks(w.get("cuda", []), "grid/worlds/cuda"):
        arch, rt, fi = str(combo["arch"]), str(combo.get("cuda_runtime", "12.8")), bool(combo.get("flashinfer", True))
        out.append({"vendor": "cuda", "arch": arch, "cuda_runtime": rt, "flashinfer": fi,
                    "env": {} if fi else {"SGLANG_IS_FLASHINFER_AVAILABLE": "false"},
                    "name": f"cuda-{arch}-cu{rt}" + ("" if fi else "-noflashinfer")})
    for combo in _blocks(w.get("rocm", []), "grid/worlds/rocm"):
        arch, aiter = combo["arch"], bool(combo.get("sglang_use_aiter", False))
        if arch not in ROCM_CAPABILITY:
            raise OracleError(f"grid/worlds/rocm/arch: unknown gfx target '{arch}' ({', '.join(ROCM_CAPABILITY)})")
        out.append({"vendor": "rocm", "arch": arch, "sglang_use_aiter": aiter,
                    "env": {"SGLANG_USE_AITER": "1" if aiter else "0"},
                    "name": f"rocm-{arch}" + ("-aiter" if aiter else "")})
    for combo in _blocks(w.get("cpu", []), "grid/worlds/cpu"):
        amx = bool(combo.get("amx", False))
        out.append({"vendor": "cpu", "arch": None, "amx": amx, "env": {"SGLANG_USE_CPU_ENGINE": "1"},
                    "name": "cpu" + ("+amx" if amx else "")})
    for combo in _blocks(w.get("xpu", []), "grid/worlds/xpu"):
        xmx = bool(combo.get("xmx", True))
        out.append({"vendor": "xpu", "arch": None, "xmx": xmx, "env": {}, "name": "xpu" + ("" if xmx else "-noxmx")})
    names = [x["name"] for x in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise OracleError(f"grid/worlds: world '{dup[0]}' is listed twice")
    return out


DOMAIN_OF = {"linear": "linear", "mha": "decoder", "spec": "decoder", "mha_asym": "decoder", "gpt_oss": "decoder", "mla": "decoder", "dsa": "decoder",
             "override": "decoder", "override_mla": "decoder", "split": "decoder", "encoder": "encoder"}
MODELS = ("llama", "mistral_swa", "gpt_oss", "deepseek_v2", "deepseek_v3", "deepseek_v32", "qwen3_next", "kimi_linear",
          "kimi_linear_safe_gate", "nemotron_h")
# The hybrid models of the linear group and their linear layers' kind (ask_sglang.LINEAR_MODELS reads the same).
LINEAR_KIND = {"qwen3_next": "gdn", "kimi_linear": "kda", "kimi_linear_safe_gate": "kda", "nemotron_h": "mamba2"}
QUERY_AXES = ("model", "head_size", "head_size_v", "num_heads", "num_kv_heads", "dtype", "kv_cache_dtype", "features",
              "page_size", "deterministic", "spec_topk", "override", "prefill_override", "decode_override", "phase",
              "ssm_dtype")


def cases_of(grid: Dict[str, Any]) -> List[Dict[str, Any]]:
    if grid.get("engine") != "sglang":
        raise OracleError("grid: 'engine' must be \"sglang\"")
    domains = need(grid, "domains", dict, "grid")
    for group in domains:
        if group not in DOMAIN_OF:
            raise OracleError(f"grid/domains: unknown group '{group}' ({', '.join(DOMAIN_OF)})")
    cases = []
    for world in worlds_of(grid):
        for group, axes in domains.items():
            for q in _blocks(axes, f"grid/domains/{group}"):
                unknown = sorted(set(q) - set(QUERY_AXES))
                if unknown:
                    raise OracleError(f"grid/domains/{group}: unknown axis '{unknown[0]}' ({', '.join(QUERY_AXES)})")
                if q.get("phase", "decode") not in ("prefill", "decode"):
                    raise OracleError(f"grid/domains/{group}/phase: '{q['phase']}' is not prefill or decode")
                if q.get("model", "llama") not in MODELS:
                    raise OracleError(f"grid/domains/{group}/model: unknown model '{q['model']}' ({', '.join(MODELS)})")
                hybrid = q.get("model", "llama") in LINEAR_KIND
                if (group == "linear") != hybrid:
                    raise OracleError(f"grid/domains/{group}/model: '{q.get('model', 'llama')}' " + (
                        f"is not a hybrid model of the linear group ({', '.join(LINEAR_KIND)})" if group == "linear"
                        else "is a hybrid model: ask for it in the linear group"))
                if q.get("ssm_dtype") not in (None, "float32", "bfloat16", "float16"):
                    raise OracleError(f"grid/domains/{group}/ssm_dtype: '{q['ssm_dtype']}' is not one of float32, "
                                      "bfloat16, float16 (--mamba-ssm-dtype)")
                cases.append({"id": f"sglang/{world['name']}/{group}/{len(cases)}", "engine": "sglang",
                              "world": world, "group": group, "domain": DOMAIN_OF[group], "query": q})
    return cases


# ------------------------------------------------------------------------------- model checkpoints
def model_config(q: Dict[str, Any]) -> Dict[str, Any]:
    """config.json of the checkpoint a case describes (only what ModelConfig reads)."""
    model = q.get("model", "llama")
    dtype = q.get("dtype", "bfloat16")
    feats = set(q.get("features", []))
    base = {"num_hidden_layers": 2, "vocab_size": 32000, "max_position_embeddings": 8192, "torch_dtype": dtype,
            "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    if model in ("llama", "mistral_swa"):
        heads = q.get("num_heads") or 32
        hs = q.get("head_size", 128)
        cfg = {**base, "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "intermediate_size": 11008, "num_attention_heads": heads,
               "num_key_value_heads": q.get("num_kv_heads") or max(1, heads // 4), "head_dim": hs}
        if model == "mistral_swa" or "sliding_window" in feats:
            cfg.update({"architectures": ["MistralForCausalLM"], "model_type": "mistral", "sliding_window": 4096})
        if q.get("head_size_v"):
            cfg["v_head_dim"] = q["head_size_v"]
        if "sinks" in feats:
            cfg["learnable_sink"] = True  # ModelConfig._detect_attention_sinks reads it
        return cfg
    if model == "gpt_oss":
        return {**base, "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
                "intermediate_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8,
                "head_dim": q.get("head_size", 64), "sliding_window": 128,
                "layer_types": ["sliding_attention", "full_attention"], "num_local_experts": 32,
                "num_experts_per_tok": 4, "vocab_size": 201088, "max_position_embeddings": 131072}
    if model == "qwen3_next":  # GDN layers, 128-wide linear heads (Qwen3-Next-80B's)
        return {**base, "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 4,
                "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
                "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
                "linear_num_value_heads": 32, "full_attention_interval": 4, "num_experts": 8,
                "num_experts_per_tok": 2, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
                "intermediate_size": 4096}
    if model in ("kimi_linear", "kimi_linear_safe_gate"):  # KDA layers; the safe gate is gate_lower_bound
        linear = {"kda_layers": [1, 2, 3], "full_attn_layers": [4], "num_heads": 16, "head_dim": 128,
                  "short_conv_kernel_size": 4}
        if model == "kimi_linear_safe_gate":
            linear["gate_lower_bound"] = -5.0
        return {**base, "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "num_hidden_layers": 4,
                "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 128,
                "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
                "linear_attn_config": linear, "num_experts": 8, "num_experts_per_token": 2,
                "moe_intermediate_size": 512, "intermediate_size": 4096}
    if model == "nemotron_h":  # mamba2 layers
        return {**base, "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "num_hidden_layers": 4,
                "hybrid_override_pattern": "M*M-", "hidden_size": 2048, "num_attention_heads": 16,
                "num_key_value_heads": 2, "head_dim": 128, "mamba_num_heads": 32, "mamba_head_dim": 64,
                "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "intermediate_size": 4096}
    heads = q.get("num_heads") or 128
    arch = {"deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
            "deepseek_v32": "DeepseekV32ForCausalLM"}[model]
    cfg = {**base, "architectures": [arch], "model_type": model, "hidden_size": 7168, "intermediate_size": 18432,
           "moe_intermediate_size": 2048, "num_attention_heads": heads, "num_key_value_heads": heads,
           "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "v_head_dim": 128, "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
           "first_k_dense_replace": 1, "moe_layer_freq": 1, "n_group": 1, "topk_group": 1,
           "max_position_embeddings": 163840, "vocab_size": 129280}
    if model == "deepseek_v32":
        cfg.update({"index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64})
    return cfg


def model_key(q: Dict[str, Any]) -> str:
    return json.dumps(model_config(q), sort_keys=True)


# --------------------------------------------------------------------------------------- worker
def _setup_world(world: Dict[str, Any]) -> None:
    """Makes this process look like `world` to SGLang (torch-level answers; SGLang's own probes run)."""
    for k, v in world["env"].items():
        os.environ[k] = v
    # tvm_ffi (a flashinfer dependency) JIT-builds a C++ torch addon at import; no compiler run here.
    os.environ["TVM_FFI_DISABLE_TORCH_C_DLPACK"] = "1"
    stand_ins = list(STAND_INS)
    vendor = world["vendor"]
    if vendor == "rocm":
        stand_ins.append("aiter")  # installed on SGLang's ROCm images; a binary package
    install_stand_ins(stand_ins)
    hide_modules(HIDDEN)
    import torch

    def _no_nvml(index):  # utils.common._get_device_sm_via_nvml then falls back to torch.cuda
        raise RuntimeError("oracle: no NVML")

    torch.cuda._get_nvml_device_index = _no_nvml
    if vendor in ("cuda", "rocm"):
        if vendor == "cuda":
            major, minor = (int(x) for x in world["arch"].split("."))
            torch.version.cuda = world["cuda_runtime"]
            torch.version.hip = None
            name = f"oracle NVIDIA sm_{major}{minor}"
            props = types.SimpleNamespace(name=name, major=major, minor=minor, total_memory=80 << 30,
                                          multi_processor_count=132)
        else:
            major, minor = ROCM_CAPABILITY[world["arch"]]
            torch.version.cuda = None
            torch.version.hip = "7.0.0"
            name = f"oracle AMD {world['arch']}"
            props = types.SimpleNamespace(name=name, gcnArchName=world["arch"] + ":sramecc+:xnack-", major=major,
                                          minor=minor, total_memory=192 << 30, multi_processor_count=304)
        torch.cuda.is_available = lambda: True
        torch.cuda.device_count = lambda: 1
        torch.cuda.get_device_capability = lambda device=None: (major, minor)
        torch.cuda.get_device_name = lambda device=None: name
        torch.cuda.get_device_properties = lambda device=None: props
        torch.cuda.mem_get_info = lambda device=None: (props.total_memory - (1 << 30), props.total_memory)
    else:
        torch.cuda.is_available = lambda: False
        torch.cuda.device_count = lambda: 0
        torch.version.cuda = None
        torch.version.hip = None
    if vendor == "xpu":
        xprops = types.SimpleNamespace(name="oracle Intel GPU", has_fp64=bool(world.get("xmx", True)),
                                       total_memory=64 << 30)
        torch.xpu.is_available = lambda: True
        torch.xpu.device_count = lambda: 1
        torch.xpu.get_device_name = lambda device=None: xprops.name
        torch.xpu.get_device_properties = lambda device=None: xprops
        torch.xpu.get_device_capability = lambda device=None: {"version": "12.60.7"}
        torch.xpu.mem_get_info = lambda device=None: (xprops.total_memory - (1 << 30), xprops.total_memory)
    else:
        torch.xpu.is_available = lambda: False
    if vendor == "cpu":
        amx = bool(world.get("amx", False))
        torch.cpu._is_amx_tile_supported = lambda: amx
        if amx:
            # sgl_kernel's CPU build registers its ops under torch.ops.sgl_kernel when imported:
            # utils.common._is_intel_amx_backend_available looks for convert_weight_packed, and
            # modules bind two more at import (vision.py flash_attn_varlen_func, the rotary
            # embedding apply_rotary_pos_emb_cpu). Those three are defined, never run.
            lib = torch.library.Library("sgl_kernel", "DEF")
            for op in AMX_OPS:
                lib.define(f"{op}(Tensor x) -> Tensor")
            _LIBS.append(lib)
    import logging

    logging.disable(logging.WARNING)  # SGLang logs every resolution decision; the answers are read back


def _answer_from(fn) -> Dict[str, Any]:
    try:
        return fn()
    except SystemExit as e:  # argparse refused the command line (an unknown choice)
        return {"error": "ArgumentError", "message": str(getattr(e, "oracle_message", "") or e)[:600]}
    except Exception as e:  # the engine's own refusal: ValueError, AssertionError, NotImplementedError...
        return describe_exception(e)


def argv_of(q: Dict[str, Any], model_dir: str) -> List[str]:
    argv = ["--model-path", model_dir, "--skip-tokenizer-init"]
    if q.get("dtype"):
        argv += ["--dtype", q["dtype"]]
    if q.get("kv_cache_dtype") and q["kv_cache_dtype"] != "auto":
        argv += ["--kv-cache-dtype", q["kv_cache_dtype"]]
    if q.get("page_size"):
        argv += ["--page-size", str(q["page_size"])]
    if q.get("deterministic"):
        argv += ["--enable-deterministic-inference"]
    if q.get("spec_topk"):  # EAGLE speculative decoding, the checkpoint as its own draft model
        argv += ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", model_dir,
                 "--speculative-eagle-topk", str(q["spec_topk"]), "--speculative-num-steps", "3",
                 "--speculative-num-draft-tokens", str(4 if q["spec_topk"] == 1 else 8)]
    kind = LINEAR_KIND.get(q.get("model", "llama"))
    if kind is not None:  # the linear group: the override is the linear layers' flag
        # No radix cache: SGLang's hybrid-model cache (extra_buffer) needs platform support that a CPU
        # world lacks, and a non-triton linear backend changes its strategy (overrides.py); neither
        # chooses a kernel.
        argv += ["--disable-radix-cache"]
        if q.get("ssm_dtype"):
            argv += ["--mamba-ssm-dtype", q["ssm_dtype"]]
        if q.get("override"):
            argv += ["--mamba-backend" if kind == "mamba2" else "--linear-attn-backend", q["override"]]
        return argv
    for key, flag in (("override", "--attention-backend"), ("prefill_override", "--prefill-attention-backend"),
                      ("decode_override", "--decode-attention-backend")):
        if q.get(key):
            argv += [flag, q[key]]
    return argv


def run_worker(world: Dict[str, Any], cases: List[Dict[str, Any]], model_dirs: Dict[str, str]) -> List[Dict[str, Any]]:
    t0 = time.time()
    try:
        _setup_world(world)
        import torch

        import sglang
        from sglang.srt.arg_groups.overrides import attention_backends_of, resolution_result, resolved_view
        from sglang.srt.layers.attention import vision
        from sglang.srt.server_args import ServerArgs
    except Exception as e:  # the world cannot be set up: every case is not asked, with the reason
        reason = f"world setup failed: {type(e).__name__}: {str(e)[:300]}"
        return [{**c, "answer": {"not_asked": reason}} for c in cases]
    # The GPU memory probes shell out (nvidia-smi, rocminfo); memory sizing does not choose the
    # attention backend, so they answer the mocked card's size (MiB) without a subprocess.
    from sglang.srt.utils import common as sg_common

    if world["vendor"] in ("cuda", "rocm"):
        mib = torch.cuda.get_device_properties(0).total_memory / (1 << 20)
        sg_common.get_nvgpu_memory_capacity = lambda: mib
        sg_common.get_amdgpu_memory_capacity = lambda: mib
    version = getattr(sglang, "__version__", None)
    if version != PINNED:
        raise OracleError(f"sglang {version} is installed, the oracle pins {PINNED}")
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    setup_s = time.time() - t0

    def parse(argv: List[str]):
        """server_args.prepare_server_args without its logging setup, the parser built once."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                raw = parser.parse_args(argv)
            except SystemExit as e:
                e.oracle_message = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else str(e)
                raise
        raw._radix_eviction_policy_explicitly_set = False
        return ServerArgs.from_cli_args(raw)

    resolved: Dict[Tuple[str, ...], Dict[str, Any]] = {}

    def resolve(argv: List[str]) -> Dict[str, Any]:
        key = tuple(argv)
        if key not in resolved:
            def go():
                sa = parse(argv)
                sa.resolve_once()
                prefill, decode = attention_backends_of(resolved_view(sa))
                out = {"prefill": prefill, "decode": decode, "page_size": resolution_result(sa, "page_size"),
                       "kv_cache_dtype": resolution_result(sa, "kv_cache_dtype")}
                if "dsa" in (prefill, decode):
                    out["dsa"] = [resolution_result(sa, "dsa_prefill_backend"), resolution_result(sa, "dsa_decode_backend")]
                return out
            resolved[key] = _answer_from(go)
        return resolved[key]

    linear_modules: Dict[str, Any] = {}

    def linear_setup() -> Dict[str, Any]:
        """The linear-attention modules, imported once per world, with empty kernel stand-ins."""
        if linear_modules:
            return linear_modules
        import importlib

        if world["vendor"] == "cpu":
            lib = torch.library.Library("sgl_kernel", "FRAGMENT")
            for op in GDN_CPU_OPS:
                lib.define(f"{op}(Tensor x) -> Tensor")
            _LIBS.append(lib)

        class _Kernel:  # a kernel class's stand-in: the dispatcher only builds it
            supports_prefill = True
            supports_target_verify = True
            supports_packed_decode = False

            def __init__(self, *args, **kwargs):
                pass

        base = "sglang.srt.layers.attention.linear.kernels."
        for module, cls in LINEAR_KERNELS:
            try:
                m = importlib.import_module(base + module)
            except Exception:  # noqa: BLE001 (a kernel package the venv lacks: the stand-in module)
                m = types.ModuleType(base + module)
                sys.modules[base + module] = m
            setattr(m, cls, _Kernel)
        # The FlashInfer GDN prefill kernel is importable where flashinfer (with its cutlass DSL) is.
        fi = sys.modules[base + "gdn_flashinfer"]
        fi.is_flashinfer_gdn_prefill_available = lambda: bool(world.get("flashinfer", False))
        from sglang.srt.configs.hybrid_arch import hybrid_gdn_config
        from sglang.srt.configs.mamba_utils import mamba2_state_dtype
        from sglang.srt.configs.model_config import ModelConfig
        from sglang.srt.layers.attention.linear import gdn_backend, kda_backend
        from sglang.srt.layers.attention.linear.utils import resolve_linear_attn_backends
        from sglang.srt.runtime_context import publish

        gdn_backend.TritonGDNKernel = _Kernel
        kda_backend.TritonKDAKernel = _Kernel
        linear_modules.update(gdn=gdn_backend, kda=kda_backend, resolve=resolve_linear_attn_backends, publish=publish,
                              ModelConfig=ModelConfig, state_dtype=mamba2_state_dtype, is_gdn=hybrid_gdn_config)
        return linear_modules

    def ask_linear(q: Dict[str, Any], argv: List[str]) -> Dict[str, Any]:
        key = ("linear",) + tuple(argv)
        if key in resolved:
            return resolved[key]
        kind = LINEAR_KIND[q["model"]]

        def go():
            os.environ.pop("SGLANG_MAMBA_SSM_DTYPE", None)  # resolution writes it; read live by the next case
            sa = parse(argv)
            sa.resolve_once()
            if kind == "mamba2":  # --mamba-backend: the decode (state update) kernel; prefill scans in Triton
                return {"prefill": "triton", "decode": resolution_result(sa, "mamba_backend")}
            m = linear_setup()
            m["publish"](sa, role="oracle")
            mc = m["ModelConfig"].from_server_args(sa)
            state = m["state_dtype"](mc.hf_config).temporal
            runner = types.SimpleNamespace(model_config=mc, req_to_token_pool=types.SimpleNamespace(
                mamba_pool=types.SimpleNamespace(mamba_cache=types.SimpleNamespace(temporal=torch.empty(0, dtype=state)))))
            # attention_registry.attn_backend_wrapper: the runtime prefill default (not on NPU)
            if kind == "gdn":
                default = m["gdn"].flashinfer_gdn_prefill_default(runner)
                dispatcher = m["gdn"].GDNKernelDispatcher
            else:
                default = m["kda"].flashinfer_kda_prefill_default(runner)
                dispatcher = m["kda"].KDAKernelDispatcher
            b = m["resolve"](prefill_default=default)
            if kind == "gdn":  # GDNAttnBackend.__init__'s check, before it builds the dispatcher
                m["gdn"]._validate_gdn_linear_attn_backends(b)
            dispatcher(b.decode, b.prefill, b.verify)  # its own refusals by name and platform
            return {"prefill": b.prefill.value, "decode": b.decode.value, "verify": b.verify.value}

        resolved[key] = _answer_from(go)
        return resolved[key]

    class _Mm:  # what get_mm() returns once the `mm` namespace is published: the parsed flag
        mm_attention_backend: Optional[str] = None

    mm = _Mm()
    vision.get_mm = lambda: mm

    out = []
    for c in cases:
        q = c["query"]
        if c["group"] == "encoder":
            def ask():
                sa = parse(["--model-path", "dummy"] + (["--mm-attention-backend", q["override"]] if q.get("override") else []))
                mm.mm_attention_backend = sa.mm_attention_backend
                return {"backend": vision.VisionAttention._determine_attention_backend(None, None)}
            ans = _answer_from(ask)
        elif c["group"] == "linear":
            r = ask_linear(q, argv_of(q, model_dirs[model_key(q)]))
            ans = r if "error" in r else {"backend": r[q.get("phase", "decode")], "resolved": r}
        else:
            r = resolve(argv_of(q, model_dirs[model_key(q)]))
            if "error" in r:
                ans = r
            else:
                phase = q.get("phase", "decode")
                ans = {"backend": r[phase], "resolved": r}
        out.append({**c, "answer": ans})
    sys.stderr.write(f"[sglang] world {world['name']}: {len(cases)} cases, {len(resolved)} resolutions, "
                     f"setup {setup_s:.1f}s, total {time.time() - t0:.1f}s\n")
    return out


# --------------------------------------------------------------------------------------- parent
def run_all(by_world: Dict[str, List[Dict[str, Any]]], jobs: int, model_dirs: Dict[str, str]) -> List[Dict[str, Any]]:
    """Forks one worker per world (`jobs` at a time) from this process, which has imported torch and
    transformers but no SGLang module; each worker writes its answers to a file."""
    import importlib

    for name in PREIMPORT:  # platform-neutral: imported once, before the fork (import cost only)
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a worker imports it again, and reports what fails)
            pass

    tmp = tempfile.mkdtemp(prefix="attnsel-oracle-sglang-")
    pending = list(by_world.items())
    running: Dict[int, Tuple[str, List[Dict[str, Any]], str, str]] = {}
    results: Dict[str, List[Dict[str, Any]]] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                name, cs = pending.pop(0)
                path, log = os.path.join(tmp, f"{name}.json"), os.path.join(tmp, f"{name}.log")
                pid = os.fork()
                if pid == 0:  # the worker
                    code = 0
                    try:
                        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                        os.dup2(fd, 1)
                        os.dup2(fd, 2)
                        ans = run_worker(cs[0]["world"], cs, model_dirs)
                        with open(path, "w", encoding="utf-8") as f:
                            json.dump(ans, f)
                    except OracleError as e:
                        sys.stderr.write(f"engine_sglang: error: {e}\n")
                        code = 2
                    except BaseException as e:  # noqa: BLE001 (reported by the parent)
                        import traceback

                        traceback.print_exc()
                        sys.stderr.write(f"worker failed: {type(e).__name__}: {e}\n")
                        code = 1
                    sys.stderr.flush()
                    os._exit(code)
                running[pid] = (name, cs, path, log)
            pid, status = os.wait()
            if pid not in running:
                continue
            name, cs, path, log = running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            with open(log, encoding="utf-8", errors="replace") as f:
                err = f.read()
            for line in err.splitlines():
                if line.startswith("[sglang]") or line.startswith("engine_sglang: error"):
                    sys.stderr.write(line + "\n")
            if code == 2:
                raise OracleError(err.strip().splitlines()[-1].split("error: ", 1)[-1] if err.strip() else "worker failed")
            if code != 0 or not os.path.exists(path):
                tail = " | ".join(err.strip().splitlines()[-3:])
                results[name] = [{**c, "answer": {"not_asked": f"worker for {name} exited {code}: {tail[:400]}"}}
                                 for c in cs]
            else:
                with open(path, encoding="utf-8") as f:
                    results[name] = json.load(f)
    finally:
        for pid in list(running):
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    return [c for name in by_world for c in results[name]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid")
    ap.add_argument("--out")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--world", action="append", help="only the worlds of these names (repeatable)")
    args = ap.parse_args(argv)
    models = None
    try:
        if not args.grid or not args.out:
            raise OracleError("--grid and --out are required")
        grid = load_json(args.grid, "grid")
        cases = cases_of(grid)
        if args.world:
            known = {c["world"]["name"] for c in cases}
            for w in args.world:
                if w not in known:
                    raise OracleError(f"--world {w}: no such world in the grid ({', '.join(sorted(known))})")
            cases = [c for c in cases if c["world"]["name"] in args.world]
        cases = sample(cases, args.sample)
        models = tempfile.mkdtemp(prefix="attnsel-oracle-models-")
        model_dirs: Dict[str, str] = {}
        for c in cases:
            if c["group"] == "encoder":
                continue
            key = model_key(c["query"])
            if key not in model_dirs:
                d = os.path.join(models, f"m{len(model_dirs)}")
                os.makedirs(d)
                with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
                    f.write(key)
                model_dirs[key] = d
        t0 = time.time()
        worlds = by_world(cases)
        answers = run_all(worlds, args.jobs, model_dirs)
        sys.stderr.write(f"[sglang] {len(answers)} cases in {len(worlds)} worlds: {time.time() - t0:.0f}s\n")
        write_answers(args.out, "sglang", PINNED, args.grid, answers)
        return 0
    except OracleError as e:
        sys.stderr.write(f"engine_sglang: error: {e}\n")
        return 2
    finally:
        if models:
            shutil.rmtree(models, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
