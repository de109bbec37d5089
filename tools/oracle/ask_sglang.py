# SPDX-License-Identifier: Apache-2.0
"""How compare.py asks attnsel's sglang catalog a question that engine_sglang.py asked SGLang.

The SGLang command line of a case (--attention-backend, the per-phase flags, --mm-attention-backend,
--kv-cache-dtype) is read by attnsel's own SGLang adapter, attnsel.engines.sglang.parse_flags (SGLang's
flag vocabulary and its flag rewrites), and attnsel's answer is written back in SGLang's spelling with
attnsel.engines.sglang.to_sglang (FA3_MLA -> fa3, TRITON_ATTN -> triton_attn), so the two answers
compare name for name."""
import json
from typing import Any, Dict, List

# Models of the grid (engine_sglang.model_config) -> attention mode, fixed features, MLA head size.
MLA_MODELS = ("deepseek_v2", "deepseek_v3")
SPARSE_MODELS = ("deepseek_v32",)
# The linear group's hybrid models -> the linear layers' mode and features (engine_sglang.LINEAR_KIND).
LINEAR_MODELS = {"qwen3_next": ("gated_delta", []), "kimi_linear": ("gated_delta", ["kda"]),
                 "kimi_linear_safe_gate": ("gated_delta", ["kda", "safe_gate"]), "nemotron_h": ("mamba2", [])}
MLA_HEAD_SIZE = 576  # kv_lora_rank 512 + qk_rope_head_dim 64, as attnsel.Query.from_model_config
# SGLang --kv-cache-dtype -> attnsel kv_cache_dtype
KV_DTYPES = {"auto": "auto", "bf16": "bfloat16", "bfloat16": "bfloat16", "fp8_e4m3": "fp8_e4m3",
             "fp8_e5m2": "fp8_e5m2"}


def registry(attnsel):
    return attnsel.builtin_catalog("sglang")


def platform_json(world: Dict[str, Any]) -> Dict[str, Any]:
    v = world["vendor"]
    p: Dict[str, Any] = {"vendor": v}
    comps: List[str] = []
    if v == "cuda":
        p["capability"] = world["arch"]
        comps.append(f"cuda_runtime={world['cuda_runtime']}")
        if world.get("flashinfer", True):
            comps.append("flashinfer")
    elif v == "rocm":
        p["arch"] = world["arch"]
        comps.append("aiter")
        if world.get("sglang_use_aiter"):
            comps.append("sglang_use_aiter")
    elif v == "cpu":
        if world.get("amx"):
            comps.append("cpu_amx")
    elif v == "xpu":
        if world.get("xmx", True):
            comps.append("xpu_xmx")  # Intel XMX (SGLang's xpu_has_xmx_support); catalogs without intel_xpu ignore it
    p["components"] = comps
    return p


def mode_of(q: Dict[str, Any]) -> str:
    m = q.get("model", "llama")
    return "sparse_mla" if m in SPARSE_MODELS else "mla" if m in MLA_MODELS else "standard"


def query_json(case: Dict[str, Any]) -> Dict[str, Any]:
    q = case["query"]
    if case["group"] == "encoder":
        # a vision tower's attention: non-causal, no KV cache (Query.from_model_config(part="vision"))
        return {"domain": "encoder", "attn_type": "encoder_only", "head_size": q["head_size"], "dtype": q["dtype"]}
    if case["group"] == "linear":
        mode, feats = LINEAR_MODELS[q["model"]]
        feats = list(feats)
        if q.get("ssm_dtype") == "bfloat16":  # --mamba-ssm-dtype bfloat16 on the command line
            feats.append("bf16_ssm_state")
        if q.get("deterministic"):
            feats.append("deterministic")
        out = {"domain": "linear", "mode": mode, "dtype": q.get("dtype", "bfloat16"), "phase": q.get("phase", "decode")}
        if feats:
            out["features"] = sorted(feats)
        return out
    mode = mode_of(q)
    out: Dict[str, Any] = {"dtype": q.get("dtype", "bfloat16"),
                           "kv_cache_dtype": KV_DTYPES.get(q.get("kv_cache_dtype", "auto"), q.get("kv_cache_dtype")),
                           "phase": q.get("phase", "decode")}
    feats = list(q.get("features", []))
    if mode == "standard":
        if q.get("model") == "gpt_oss":
            out["head_size"] = q.get("head_size", 64)
            feats = ["sinks", "sliding_window"]
        else:
            out["head_size"] = q.get("head_size", 128)
            if q.get("head_size_v"):
                out["head_size_v"] = q["head_size_v"]
            if q.get("model") == "mistral_swa" and "sliding_window" not in feats:
                feats.append("sliding_window")
    else:
        out["head_size"] = MLA_HEAD_SIZE
        out["mode"] = mode
        out["num_heads"] = q.get("num_heads") or 128
    if q.get("deterministic"):
        feats.append("deterministic")
    if (q.get("spec_topk") or 0) > 1:  # the catalog's spec_tree: EAGLE top-k > 1
        feats.append("spec_tree")
    if feats:
        out["features"] = sorted(set(feats))
    if q.get("page_size"):
        out["block_size"] = q["page_size"]
    return out


def flags_of(case: Dict[str, Any]) -> List[str]:
    """The attention flags of the case's SGLang command line (engine_sglang.argv_of writes the same)."""
    q = case["query"]
    if case["group"] == "encoder":
        return ["--mm-attention-backend", q["override"]] if q.get("override") else []
    if case["group"] == "linear":
        if not q.get("override"):
            return []
        return ["--mamba-backend" if LINEAR_MODELS[q["model"]][0] == "mamba2" else "--linear-attn-backend", q["override"]]
    argv: List[str] = []
    for key, flag in (("override", "--attention-backend"), ("prefill_override", "--prefill-attention-backend"),
                      ("decode_override", "--decode-attention-backend")):
        if q.get(key):
            argv += [flag, q[key]]
    if q.get("kv_cache_dtype") and q["kv_cache_dtype"] != "auto":
        argv += ["--kv-cache-dtype", q["kv_cache_dtype"]]
    return argv


def _vocabulary(attnsel, reg):
    """SGLang's spellings (decoder, encoder) of the asked catalog's backends and aliases, and the names
    that carry an MLA flavour (X where X_MLA is a backend). attnsel.engines.sglang's vocabulary is the
    built-in sglang catalog's; a versioned catalog (catalog/sglang@0.5.23.json, --catalog) names
    backends the built-in lacks (dsa, intel_xpu, xpu_attn...) and MLA flavours beyond fa3/flashinfer/
    triton/aiter (intel_amx, torch_native on CPU)."""
    key = id(reg)
    if _VOCAB.get("key") != key:
        doc = json.loads(attnsel.to_json(reg))
        names = {"decoder": set(), "encoder": set(), "linear": set()}
        mla = set()
        from attnsel.engines import sglang as sg

        backends = sg._backends_of(doc)
        linear = sg._linear_by_mode(backends)
        for b in doc["backends"]:
            for n in [b["name"]] + list(b.get("aliases", [])):
                low = n.lower()
                if low.endswith("_mla") and b.get("mode") == "mla" and any(
                        x["name"] == n[: -len("_MLA")] and "decoder" in x["domains"] for x in doc["backends"]):
                    mla.add(low[: -len("_mla")])
                    low = low[: -len("_mla")]
                for d in b["domains"]:
                    names[d].add(low)
        _VOCAB.update(key=key, decoder=frozenset(names["decoder"]), encoder=frozenset(names["encoder"]),
                      mla=tuple(sorted(mla)), reg=reg, backends=backends, linear=linear)
    return _VOCAB


_VOCAB: Dict[str, Any] = {}


def ask(attnsel, reg, case: Dict[str, Any]) -> Dict[str, Any]:
    from attnsel.engines import sglang as sg

    vocab = _vocabulary(attnsel, reg)
    saved = (sg.decoder_names, sg.encoder_names, sg._MLA_FLAVOURED, sg._catalog_backends, sg._linear_backends)
    sg.decoder_names, sg.encoder_names = (lambda: vocab["decoder"]), (lambda: vocab["encoder"])
    sg._MLA_FLAVOURED = vocab["mla"]
    sg._catalog_backends, sg._linear_backends = (lambda: vocab["backends"]), (lambda: vocab["linear"])
    try:
        return _ask(attnsel, reg, case, sg)
    finally:
        sg.decoder_names, sg.encoder_names, sg._MLA_FLAVOURED, sg._catalog_backends, sg._linear_backends = saved


def _ask(attnsel, reg, case: Dict[str, Any], sg) -> Dict[str, Any]:
    platform = attnsel.Platform.from_json(json.dumps(platform_json(case["world"])))
    query = attnsel.Query.from_json(json.dumps(query_json(case)))
    try:
        linear_mode = LINEAR_MODELS[case["query"]["model"]][0] if case["group"] == "linear" else "gated_delta"
        overrides = sg.parse_flags(flags_of(case), mode=mode_of(case["query"]), linear_mode=linear_mode)
    except ValueError as e:  # a name attnsel's SGLang vocabulary does not hold
        return {"error": "flag_refused", "message": str(e)[:300]}
    oset = overrides.override_set()
    ex = attnsel.explain(reg, query, platform, oset)
    if not ex.ok:
        return {"error": ex.result.code, "message": ex.result.message[:300]}
    if case["group"] != "encoder":
        # SGLang resolves (and refuses) one server, both phases at once: a phase attnsel cannot
        # serve fails the command line, as SGLang's refusal does (attnsel plan_phases' reading).
        asked = query_json(case)["phase"]
        other = "prefill" if asked == "decode" else "decode"
        q2 = attnsel.Query.from_json(json.dumps({**query_json(case), "phase": other}))
        ex2 = attnsel.explain(reg, q2, platform, oset)
        if not ex2.ok:
            return {"error": ex2.result.code, "message": f"{other} phase: {ex2.result.message[:280]}"}
    return {"backend": sg.to_sglang(ex.result.backend)}
