# SPDX-License-Identifier: Apache-2.0
"""How compare.py asks attnsel's vllm catalog a question that engine_vllm.py asked vLLM."""
import json
from typing import Any, Dict

# vLLM's MLA prefill backends live in attnsel's vllm catalog as MLA_PREFILL_*.
MLA_PREFILL_NAMES = {"FLASH_ATTN": "MLA_PREFILL_FLASH_ATTN", "FLASHINFER": "MLA_PREFILL_FLASHINFER",
                     "TRTLLM_RAGGED": "MLA_PREFILL_TRTLLM_RAGGED", "TOKENSPEED_MLA": "MLA_PREFILL_TOKENSPEED",
                     "ROCM_AITER_FA": "MLA_PREFILL_ROCM_AITER_FA", "CPU": "MLA_PREFILL_CPU"}
# engine_vllm.py records the selected class's get_name(), which for a few classes is not the
# AttentionBackendEnum member that selected it: vllm 0.33.0 v1/attention/backends/rocm_aiter_fa.py
# AiterFlashAttentionBackend.get_name() is "FLASH_ATTN", mla/aiter_triton_mla.py (ROCM_AITER_TRITON_MLA)
# "AITER_TRITON_MLA". attnsel's answer is written in the engine's spelling before the two are compared.
DECODER_ENGINE_NAMES = {"ROCM_AITER_FA": "FLASH_ATTN", "ROCM_AITER_TRITON_MLA": "AITER_TRITON_MLA"}
# The MLA prefill classes' get_name() (mla/prefill/*.py): CPU is "CPU_SDPA_MLA", ZEN_CPU "ZEN_CPU_SDPA_MLA".
MLA_PREFILL_ENGINE_NAMES = {**{v: k for k, v in MLA_PREFILL_NAMES.items()}, "MLA_PREFILL_CPU": "CPU_SDPA_MLA"}
# The attnsel components that stand for vLLM's AITER switches (VLLM_ROCM_USE_AITER*).
ROCM_AITER_COMPONENTS = {"absent": [], "installed_off": ["aiter"],
                         "on": ["aiter", "aiter_enabled", "aiter_mha", "aiter_mla"],
                         "on_no_mha": ["aiter", "aiter_enabled", "aiter_mla"],
                         "on_no_mla": ["aiter", "aiter_enabled", "aiter_mha"]}


def registry(attnsel):
    return attnsel.builtin_catalog("vllm")


def platform_json(world: Dict[str, Any]) -> Dict[str, Any]:
    p: Dict[str, Any] = {"vendor": world["vendor"]}
    comps = list(world["components"])
    if world["vendor"] == "cuda":
        p["capability"] = world["arch"]
    elif world["vendor"] == "rocm":
        p["arch"] = world["arch"]
        comps = ROCM_AITER_COMPONENTS[world.get("aiter", "absent")] + [c for c in comps if c == "flash_attn"]
    p["components"] = comps
    return p


# vLLM's MambaAttentionBackendEnum members (a layer's mamba_type) as attnsel's linear-domain modes.
LINEAR_MODES = {"MAMBA1": "mamba1", "MAMBA2": "mamba2", "SHORT_CONV": "short_conv", "LINEAR": "lightning",
                "GDN_ATTN": "gated_delta"}


def query_json(case: Dict[str, Any]) -> Dict[str, Any]:
    q, g = case["query"], case["group"]
    if g == "linear":
        out = {"domain": "linear", "mode": LINEAR_MODES[q["kind"]], "dtype": q["dtype"]}
        # KDA layers run GDN_ATTN in vLLM (the shared Kimi layer); the flag means nothing for other kinds.
        feats = list(q.get("features", [])) + (["kda"] if q.get("kda") and q["kind"] == "GDN_ATTN" else [])
        if feats:
            out["features"] = feats
        return out
    if g == "encoder":
        return {"domain": "encoder", "head_size": q["head_size"], "dtype": q["dtype"]}
    if g == "mla_prefill":
        nope, rope, v = q["dims"]
        return {"head_size": nope + rope, "head_size_v": v, "dtype": q["dtype"], "mode": "mla", "phase": "prefill"}
    out: Dict[str, Any] = {"head_size": q["head_size"], "dtype": q["dtype"], "kv_cache_dtype": q["kv_cache_dtype"]}
    if q.get("block_size"):
        out["block_size"] = q["block_size"]
    if g.startswith("mla"):
        out["mode"] = "sparse_mla" if q.get("sparse") else "mla"
        if q.get("num_heads"):
            out["num_heads"] = q["num_heads"]
    else:
        out["attn_type"] = q.get("attn_type", "decoder")
        if q.get("features"):
            out["features"] = q["features"]
    return out


def ask(attnsel, reg, case: Dict[str, Any]) -> Dict[str, Any]:
    platform = attnsel.Platform.from_json(json.dumps(platform_json(case["world"])))
    query = attnsel.Query.from_json(json.dumps(query_json(case)))
    override = case["query"].get("override") or ""
    if case["group"] == "mla_prefill" and override:
        override = MLA_PREFILL_NAMES.get(override, override)
    ex = attnsel.explain(reg, query, platform, override)
    if ex.ok:
        b = ex.result.backend
        if case["group"] == "mla_prefill":
            b = MLA_PREFILL_ENGINE_NAMES.get(b, b)
        elif case["group"] != "encoder":
            b = DECODER_ENGINE_NAMES.get(b, b)
        return {"backend": b}
    return {"error": ex.result.code, "message": ex.result.message[:300]}
