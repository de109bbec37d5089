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
    assert set(kinds) == {"linear", "full"}
    assert kinds["linear"].prefill.backend == "GDN_ATTN"
    assert kinds["linear"].prefill_query.domain == "linear"
    assert kinds["full"].layers == tuple(range(3, 40, 4))
    assert kinds["full"].decode_query.seq_len_q == 1
    assert plan.block_size == 16


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


def test_a_layer_list_that_does_not_fit_names_the_key():
    bad = {"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2, "layer_types": ["full_attention"]}
    with pytest.raises(ValueError, match=r"/layer_types: expected 2 entries"):
        attnsel.plan_model(attnsel.builtin_catalog("vllm"), bad, H100)


def test_from_model_config_adds_features_to_the_configs():
    q = attnsel.Query.from_model_config(CONFIGS / "gpt-oss-20b.json", features=["alibi"])
    assert set(q.features) == {"sliding_window", "sinks", "alibi"}
    assert set(attnsel.Query.from_model_config(CONFIGS / "llama-3-8b.json", features="alibi").features) == {"alibi"}
