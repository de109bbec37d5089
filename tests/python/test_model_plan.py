# SPDX-License-Identifier: Apache-2.0
# attnsel.plan_model: every layer of a model from its config.json, as `attnsel plan --model-config`.
import pytest

import attnsel
from conftest import SOURCE_DIR

CONFIGS = SOURCE_DIR / "tests" / "data" / "model_configs"
H100 = attnsel.Platform.cuda(9, 0)


def test_model_config_lists_each_layer_kind():
    c = attnsel.read_model_config(CONFIGS / "gpt-oss-20b.json")
    assert c.layers == tuple("sliding" if i % 2 == 0 else "full" for i in range(24))
    assert c.assumptions == ()
    gemma = attnsel.read_model_config(CONFIGS / "gemma-3-27b-it.json")
    assert [i for i, k in enumerate(gemma.layers) if k == "full"] == [5, 11, 17, 23, 29, 35, 41, 47, 53, 59]
    assert any("default 6" in a for a in gemma.assumptions)
    assert "mm_prefix" in gemma.features  # a prefix-LM (vLLM is_mm_prefix_lm)
    scout = attnsel.read_model_config(CONFIGS / "llama-4-scout-17b-16e-instruct.json")
    assert scout.chunk_size == 8192 and scout.layers.count("chunked") == 36
    assert attnsel.read_model_config(CONFIGS / "gemma-4-26b-a4b.json").global_head_size == 512
    assert attnsel.read_model_config(CONFIGS / "llama-3-8b.json").chunk_size is None


def test_plan_groups_a_hybrid_model_and_selects_each_group():
    plan = attnsel.plan_model(attnsel.builtin_catalog("vllm"), CONFIGS / "qwen3.5-35b-a3b.json", H100)
    assert plan.ok
    kinds = {g.kind: g for g in plan.groups}
    assert set(kinds) == {"linear", "full", "encoder"}  # and the vision tower
    assert kinds["encoder"].part == "vision" and kinds["encoder"].decode is None
    assert kinds["linear"].prefill.backend == "GDN_ATTN"
    assert kinds["linear"].prefill_query.domain == "linear"
    assert kinds["full"].layers == tuple(range(3, 40, 4))
    assert kinds["full"].decode_query.seq_len_q == 1
    # vLLM pages the gated delta-rule state with the attention KV cache: one page holds a layer's state
    # (2,146,304 bytes), in steps of 64 tokens with prefix caching on (vLLM 0.33.0's own figures:
    # tools/oracle/plan_rules.py).
    assert plan.block_size == 1088 and kinds["full"].block_size == 16
    assert plan.linear_state_bytes == 2146304 and plan.model_rule is None
    assert any(a.startswith("prefix caching on") for a in plan.assumptions)
    off = attnsel.plan_model(attnsel.builtin_catalog("vllm"), CONFIGS / "qwen3.5-35b-a3b.json", H100,
                             prefix_caching=False)
    assert off.block_size == 1056 and not any(a.startswith("prefix caching") for a in off.assumptions)
    with pytest.raises(TypeError, match="prefix_caching: expected None, True or False, got str"):
        attnsel.plan_model(attnsel.builtin_catalog("vllm"), CONFIGS / "qwen3.5-35b-a3b.json", H100,
                           prefix_caching="no")


def test_plan_applies_the_engines_model_rule():
    # vLLM's Gemma4Config: without FlashAttention 4 (an A100) TRITON_ATTN runs every layer.
    reg = attnsel.builtin_catalog("vllm")
    a100 = attnsel.plan_model(reg, CONFIGS / "gemma-4-26b-a4b.json", attnsel.Platform.cuda(8, 0))
    assert a100.model_rule == "vllm-gemma4-mixed-heads-triton"
    text = [g for g in a100.groups if g.part == "text"]
    assert {g.decode.backend for g in text} == {"TRITON_ATTN"}
    assert a100.notes[0].startswith("the engine forces TRITON_ATTN on every attention layer")
    h100 = attnsel.plan_model(reg, CONFIGS / "gemma-4-26b-a4b.json", H100)
    assert h100.model_rule == "vllm-gemma4-mixed-heads-fa4"
    # SGLang's rule is for every Gemma 4 model: triton off SM100.
    assert attnsel.plan_model(attnsel.builtin_catalog("sglang"), CONFIGS / "gemma-4-26b-a4b.json",
                              attnsel.Platform.cuda(8, 0)).model_rule == "sglang-gemma4-triton"


def test_plan_takes_a_config_a_query_and_an_override():
    reg = attnsel.builtin_catalog("vllm")
    config = attnsel.read_model_config(CONFIGS / "gpt-oss-20b.json")
    query = config.to_query().replace(dtype="float16")
    plan = attnsel.plan_model(reg, config, H100, query=query, override="TRITON_ATTN")
    assert [g.kind for g in plan.groups] == ["sliding", "full"]
    assert all(g.prefill.backend == "TRITON_ATTN" and g.prefill.overridden for g in plan.groups)
    assert all(g.prefill_query.dtype == "float16" for g in plan.groups)
    assert "sliding_window" in plan.groups[0].prefill_query.features
    assert "sliding_window" not in plan.groups[1].prefill_query.features
    # A phase without a backend is its SelectionError, not an exception.
    failed = attnsel.plan_model(reg, config, H100, override="FLASHMLA")
    assert not failed.ok
    assert isinstance(failed.groups[0].prefill, attnsel.SelectionError)
    with pytest.raises(TypeError, match="override"):
        attnsel.plan_model(reg, config, H100, override=3)
    with pytest.raises(ValueError, match="text part"):
        attnsel.plan_model(reg, attnsel.read_model_config(CONFIGS / "qwen2-vl-7b-instruct.json", part="vision"), H100)


def test_an_encoder_decoder_model_plans_cross_attention_and_its_encoder():
    whisper = attnsel.read_model_config(CONFIGS / "whisper-large-v3.json")
    assert whisper.cross_attention and whisper.num_heads == 20 and whisper.head_size == 64
    (audio,) = whisper.towers
    assert audio.part == "audio" and audio.layers == ("encoder",) * 32
    plan = attnsel.plan_model(attnsel.builtin_catalog("vllm"), whisper, H100)
    assert plan.ok
    assert [(g.kind, g.part) for g in plan.groups] == [("full", "text"), ("cross", "text"), ("encoder", "audio")]
    cross, encoder = plan.groups[1], plan.groups[2]
    assert cross.prefill_query.attn_type == "encoder_decoder" and cross.layers == tuple(range(32))
    assert isinstance(cross.decode, attnsel.Selection)
    assert encoder.prefill_query.domain == "encoder" and encoder.prefill_query.attn_type == "encoder"
    assert encoder.decode is None and encoder.decode_query is None and encoder.ok
    # A tower the reader cannot read is named, and the text part still reads.
    broken = attnsel.read_model_config({"num_attention_heads": 8, "head_dim": 64, "vision_config": {"depth": 2}})
    assert broken.towers == ()
    assert broken.assumptions[0].startswith("the vision tower is left out of the plan: /vision_config/")


def test_a_layer_list_that_does_not_fit_names_the_key():
    bad = {"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2, "layer_types": ["full_attention"]}
    with pytest.raises(ValueError, match=r"/layer_types: expected 2 entries"):
        attnsel.plan_model(attnsel.builtin_catalog("vllm"), bad, H100)


def test_from_model_config_adds_features_to_the_configs():
    q = attnsel.Query.from_model_config(CONFIGS / "gpt-oss-20b.json", features=["alibi"])
    assert set(q.features) == {"sliding_window", "sinks", "alibi"}
    assert set(attnsel.Query.from_model_config(CONFIGS / "llama-3-8b.json", features="alibi").features) == {"alibi"}


def test_per_kind_overrides_and_a_vllm_command_line():
    reg = attnsel.builtin_catalog("vllm")
    gpt_oss = CONFIGS / "gpt-oss-20b.json"
    plan = attnsel.plan_model(reg, gpt_oss, H100, per_kind={"sliding": "TRITON_ATTN", "chunked": "FLASHINFER"})
    assert [(g.kind, g.prefill.backend) for g in plan.groups] == [("sliding", "TRITON_ATTN"), ("full", "FLASH_ATTN")]
    assert plan.notes == ("the override for chunked layers (FLASHINFER) is unused: the model has none",)
    with pytest.raises(ValueError, match=r"per_kind: 'slide' is not a kind of layer group \(full, sliding"):
        attnsel.plan_model(reg, gpt_oss, H100, per_kind={"slide": "TRITON_ATTN"})
    with pytest.raises(TypeError, match=r"per_kind: expected None or a dict"):
        attnsel.plan_model(reg, gpt_oss, H100, per_kind=["sliding"])
    # vLLM's attention_config.backend_per_kind, in vLLM's KV-cache kinds, read from its command line.
    from attnsel.engines import vllm
    flags = vllm.parse_flags(["--attention-config", '{"backend_per_kind": {"sliding_window": "TRITON_ATTN"}}'])
    by_vllm = attnsel.plan_model(reg, gpt_oss, H100, override=flags)
    assert [(g.kind, g.prefill.backend, g.prefill.overridden) for g in by_vllm.groups] == [
        ("sliding", "TRITON_ATTN", True), ("full", "FLASH_ATTN", False)]
    unused = attnsel.plan_model(reg, gpt_oss, H100,
                                override=vllm.parse_flags(["--attention-config.backend_per_kind.mla_attention=FLASHMLA"]))
    assert unused.notes == ("backend_per_kind mla_attention (FLASHMLA) is unused: no layer of this "
                            "standard-attention model is of that kind",)
    with pytest.raises(TypeError, match=r"per_kind: expected None or a dict"):
        attnsel.plan_model(reg, gpt_oss, H100, override=flags, per_kind=["sliding"])
    # An MLA model: the decoder backend is the decode one; MLA prefill selects on its own unless
    # mla_prefill_backend names one (vLLM's separate MLA prefill selector).
    mla = attnsel.plan_model(reg, CONFIGS / "deepseek-v3.json", H100,
                             override=vllm.parse_flags(["--attention-backend", "FLASHMLA"]))
    (group,) = mla.groups
    assert group.decode.backend == "FLASHMLA" and group.decode.overridden
    assert group.prefill.backend.startswith("MLA_PREFILL_") and not group.prefill.overridden
