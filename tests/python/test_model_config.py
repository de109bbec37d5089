# SPDX-License-Identifier: Apache-2.0
# Query.from_model_config / read_model_config on the fixture configs, and attnsel.engines.{sglang,vllm}.
import json

import pytest

import attnsel
from attnsel.engines import EngineOverrides
from attnsel.engines import sglang as sg
from attnsel.engines import vllm
from conftest import SOURCE_DIR

CONFIGS = SOURCE_DIR / "tests" / "data" / "model_configs"


def config(name):
    return CONFIGS / name


def test_llama3_reads_heads_and_gqa():
    c = attnsel.read_model_config(str(config("llama-3-8b.json")))
    assert (c.head_size, c.head_size_v, c.num_heads, c.num_kv_heads) == (128, 128, 32, 8)
    assert c.dtype == "bfloat16" and c.mode == "standard" and c.features == ()
    q = attnsel.Query.from_model_config(config("llama-3-8b.json"), tp=4)  # a PathLike works too
    assert q == attnsel.Query(head_size=128, dtype="bfloat16", num_heads=8, num_kv_heads=2)


def test_deepseek_v3_is_mla_with_value_head_128():
    q = attnsel.Query.from_model_config(config("deepseek-v3.json"), tp=8)
    assert (q.mode, q.head_size, q.head_size_v, q.num_heads) == ("mla", 576, None, 16)  # the latent head
    c = attnsel.read_model_config(config("deepseek-v3.json"))
    assert (c.head_size, c.head_size_v, c.kv_lora_rank, c.qk_rope_head_dim) == (192, 128, 512, 64)
    vllm_mla = attnsel.select(attnsel.reference_registry(), q, attnsel.Platform.cuda(10, 0))
    assert vllm_mla.backend.endswith("MLA")


def test_gemma2_and_gpt_oss_features():
    assert attnsel.read_model_config(config("gemma-2-9b.json")).features == ("sliding_window", "softcap")
    gpt = attnsel.read_model_config(config("gpt-oss-20b.json"))
    assert gpt.sinks and gpt.sliding_window == 128 and gpt.head_size == 64
    assert attnsel.Query.from_model_config(config("gpt-oss-20b.json")).features == {"sinks", "sliding_window"}
    assert attnsel.read_model_config(config("qwen2.5-7b.json")).sliding_window is None  # use_sliding_window false


def test_vision_tower_is_an_encoder_query():
    q = attnsel.Query.from_model_config(config("qwen2-vl-7b-instruct.json"), part="vision")
    assert (q.domain, q.attn_type, q.head_size, q.num_heads) == ("encoder", "encoder_only", 80, 16)


def test_a_dict_and_explicit_fields():
    doc = json.loads(config("llama-3-8b.json").read_text())
    q = attnsel.Query.from_model_config(doc, dtype="float16", kv_cache_dtype="fp8_e4m3")
    assert (q.head_size, q.dtype, q.kv_cache_dtype) == (128, "float16", "fp8_e4m3")


def test_errors_name_the_key():
    with pytest.raises(ValueError, match=r"<dict>: /num_attention_heads: missing"):
        attnsel.read_model_config({"hidden_size": 4096})
    with pytest.raises(ValueError, match=r"/vision_config: missing"):
        attnsel.read_model_config(config("llama-3-8b.json"), part="vision")
    with pytest.raises(ValueError, match=r"part: 'speech' is not one of text, vision, audio"):
        attnsel.read_model_config({}, part="speech")
    with pytest.raises(ValueError, match=r"<dict>: /audio_config: missing"):
        attnsel.read_model_config({"num_attention_heads": 8, "head_dim": 64}, part="audio")
    with pytest.raises(TypeError, match=r"expected a path \(str or os.PathLike\) or a dict, got int"):
        attnsel.read_model_config(3)
    with pytest.raises(ValueError, match=r"no such file"):
        attnsel.read_model_config("/nonexistent/config.json")


def test_sglang_catalog_answers_for_a_model():
    reg = attnsel.builtin_catalog("sglang")
    hopper = attnsel.Platform.cuda(9, 0, components=["cuda_runtime=12.8", "flashinfer"])
    blackwell = attnsel.Platform.cuda(10, 0, components=["cuda_runtime=12.8", "flashinfer"])
    llama = attnsel.Query.from_model_config(config("llama-3-8b.json"))
    deepseek = attnsel.Query.from_model_config(config("deepseek-v3.json"), tp=8)
    assert attnsel.select(reg, llama, hopper).backend == "FA3"
    assert attnsel.select(reg, llama, blackwell).backend == "TRTLLM_MHA"
    assert attnsel.select(reg, deepseek, blackwell).backend == "FLASHINFER_MLA"
    assert attnsel.select(reg, llama, hopper, "fa3").backend == "FA3"  # SGLang's spelling, any case


# ---- attnsel.engines -----------------------------------------------------------------------------------


def test_sglang_flags_from_a_selection():
    reg = attnsel.builtin_catalog("sglang")
    hopper = attnsel.Platform.cuda(9, 0, components=["cuda_runtime=12.8"])
    mla = attnsel.Query.from_model_config(config("deepseek-v3.json"))
    sel = attnsel.select(reg, mla, hopper)
    assert sel.backend == "FA3_MLA"
    assert sg.flags(sel) == ["--attention-backend", "fa3"]
    assert sg.flags(prefill="FA4", decode="TRTLLM_MLA", page_size=64) == [
        "--prefill-attention-backend", "fa4", "--decode-attention-backend", "trtllm_mla", "--page-size", "64"]
    assert sg.flags(encoder="TRITON_ATTN") == ["--mm-attention-backend", "triton_attn"]
    with pytest.raises(ValueError, match="multimodal-encoder backend"):
        sg.flags("SDPA")


def test_sglang_flags_to_overrides_inherit_the_base():
    o = sg.parse_flags("python -m sglang.launch_server --attention-backend fa3 --decode-attention-backend=flashinfer")
    assert o == EngineOverrides(decoder="FA3", decode="FLASHINFER")
    assert (o.for_phase("prefill"), o.for_phase("decode")) == ("FA3", "FLASHINFER")
    assert o.override_set(phase="decode") == attnsel.OverrideSet(decoder="FLASHINFER")
    mla = sg.parse_flags(["--attention-backend", "triton", "--mm-attention-backend", "fa3"], mode="mla")
    assert (mla.decoder, mla.encoder) == ("TRITON_MLA", "FA3")
    assert sg.to_attnsel("TRTLLM_MLA", mode="mla") == "TRTLLM_MLA"
    assert sg.to_sglang("AITER_MLA") == "aiter"
    with pytest.raises(ValueError, match="needs a value"):
        sg.parse_flags("--attention-backend")
    with pytest.raises(ValueError, match="phase"):
        o.for_phase("verify")


def test_sglang_flags_resolve_as_sglang_does():
    # overrides.py@003bbaf9 _attention_backend_default: equal prefill and decode become the base backend
    both = sg.parse_flags("--prefill-attention-backend fa4 --decode-attention-backend fa4")
    assert both == EngineOverrides(decoder="FA4", prefill="FA4", decode="FA4")
    # _cutedsl_prefill_backend_fill: cutedsl_mla is decode-only, an unset prefill becomes trtllm_mla
    for line in ("--attention-backend cutedsl_mla", "--decode-attention-backend cutedsl_mla"):
        o = sg.parse_flags(line, mode="mla")
        assert (o.for_phase("prefill"), o.for_phase("decode")) == ("TRTLLM_MLA", "CUTEDSL_MLA"), line
    kept = sg.parse_flags("--decode-attention-backend cutedsl_mla --prefill-attention-backend fa3", mode="mla")
    assert kept.for_phase("prefill") == "FA3_MLA"
    # _attention_backend_fa3_fp8_fallback: the base fa3 with an fp8_e5m2 KV cache runs triton ...
    e5m2 = sg.parse_flags("--attention-backend fa3 --kv-cache-dtype fp8_e5m2")
    assert e5m2.decoder == "TRITON"
    assert sg.parse_flags("--attention-backend fa3 --kv-cache-dtype=fp8_e5m2", mode="mla").decoder == "TRITON_MLA"
    assert sg.parse_flags("--attention-backend fa3 --kv-cache-dtype fp8_e4m3").decoder == "FA3"
    # ... but an explicit per-phase fa3 is kept, as SGLang keeps it
    phase = sg.parse_flags("--prefill-attention-backend fa3 --decode-attention-backend fa3 --kv-cache-dtype fp8_e5m2")
    assert (phase.decoder, phase.for_phase("prefill"), phase.for_phase("decode")) == ("TRITON", "FA3", "FA3")


def test_sglang_overrides_carry_both_phases_into_attnsel():
    reg = attnsel.builtin_catalog("sglang")
    b200 = attnsel.Platform.cuda(10, 0, components=["cuda_runtime=12.8", "flashinfer"])
    mla = attnsel.Query.from_model_config(config("deepseek-v3.json"), tp=8)
    o = sg.parse_flags("--decode-attention-backend cutedsl_mla", mode="mla")
    ovr = o.override_set()
    assert ovr == attnsel.OverrideSet(prefill="TRTLLM_MLA", decode="CUTEDSL_MLA")
    for phase, expected in (("prefill", "TRTLLM_MLA"), ("decode", "CUTEDSL_MLA")):
        q = mla.replace(phase=phase)
        assert attnsel.select(reg, q, b200, ovr).backend == expected
    # attnsel is stricter than SGLang's fill when cutedsl_mla is forced for prefill itself
    ex = attnsel.explain(reg, mla.replace(phase="prefill"), b200, "cutedsl_mla")
    assert not ex.ok and ex.result.code == "backend_rejected"
    assert [r.code for r in ex.result.candidates[0].reasons] == ["call_rule"]
    # and back: the same pair as SGLang flags
    assert sg.flags(prefill=o.for_phase("prefill"), decode=o.for_phase("decode")) == [
        "--prefill-attention-backend", "trtllm_mla", "--decode-attention-backend", "cutedsl_mla"]
    assert sg.to_attnsel("cutedsl_mla", mode="mla") == "CUTEDSL_MLA"
    # A base cutedsl_mla with decode trtllm_mla: SGLang fills the prefill, and the flags leave it to that fill,
    # since an explicit prefill equal to the decode would replace the base (fuzz/regressions/py_engine_flags)
    fill = sg.parse_flags("--attention-backend cutedsl_mla --decode-attention-backend trtllm_mla", mode="mla")
    assert fill == EngineOverrides(decoder="CUTEDSL_MLA", prefill="TRTLLM_MLA", decode="TRTLLM_MLA")
    line = sg.flags(fill.decoder, prefill=fill.prefill, decode=fill.decode)
    assert line == ["--attention-backend", "cutedsl_mla", "--decode-attention-backend", "trtllm_mla"]
    assert sg.parse_flags(line, mode="mla") == fill
    assert sg.flags(encoder=sg.to_attnsel("sdpa", domain="encoder")) == ["--mm-attention-backend", "sdpa"]


def test_vllm_flags_both_ways():
    sel = attnsel.select(attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cuda(9, 0))
    assert vllm.flags(sel, block_size=16) == ["--attention-backend", sel.backend, "--block-size", "16"]
    assert vllm.flags(encoder="TORCH_SDPA") == ["--mm-encoder-attn-backend", "TORCH_SDPA"]
    with pytest.warns(FutureWarning, match="VLLM_ATTENTION_BACKEND was removed"):
        o = vllm.parse_flags("VLLM_ATTENTION_BACKEND=flashinfer vllm serve m --mm-encoder-attn-backend TORCH_SDPA")
    assert o == vllm.VllmOverrides(decoder="FLASHINFER", encoder="TORCH_SDPA")
    assert isinstance(o, EngineOverrides)
    assert vllm.parse_flags(["--attention-backend=FLASH_ATTN"]).override_set() == attnsel.OverrideSet(
        decoder="FLASH_ATTN")


def test_torch_cuda_runtime_is_read_without_importing_torch(tmp_path):
    from attnsel.detect import _torch_cuda_runtime

    (tmp_path / "version.py").write_text("__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\nhip = None\n")
    fact = _torch_cuda_runtime(str(tmp_path))
    assert (fact.name, fact.value, fact.found) == ("torch.cuda_runtime", "12.8", True)
    (tmp_path / "version.py").write_text("__version__ = '2.8.0+cpu'\ncuda: Optional[str] = None\n")
    assert not _torch_cuda_runtime(str(tmp_path)).found
