# SPDX-License-Identifier: Apache-2.0
# attnsel.engines.vllm: vLLM's attention flags (backend_per_kind, decode backend, MLA prefill) as overrides.
import json

import pytest

import attnsel
from attnsel.engines import vllm
from conftest import SOURCE_DIR

DEEPSEEK = SOURCE_DIR / "tests" / "data" / "model_configs" / "deepseek-v3.json"
GEMMA2 = SOURCE_DIR / "tests" / "data" / "model_configs" / "gemma-2-9b.json"


@pytest.mark.parametrize(
    "fields,kind",
    [
        # vLLM selector.py get_attn_spec_kind, branch by branch.
        (dict(), "full_attention"),
        (dict(features=["sliding_window"]), "sliding_window"),
        (dict(features=["sinks"]), "full_attention"),  # sinks do not change the kind (gpt-oss)
        (dict(features=["sinks", "sliding_window"]), "sliding_window"),
        (dict(mode="mla", head_size=576), "mla_attention"),
        (dict(mode="sparse_mla", head_size=576), "mla_attention"),  # use_mla is true for sparse MLA too
        (dict(mode="mla", head_size=576, features=["sliding_window"]), "sliding_window_mla"),
        (dict(attn_type="encoder_only", features=["sliding_window"]), "encoder_only_attention"),
        (dict(attn_type="encoder_decoder", mode="standard"), "cross_attention"),
        (dict(attn_type="encoder"), "full_attention"),  # only ENCODER_ONLY and ENCODER_DECODER are kinds
    ],
)
def test_kv_cache_kind_is_vllms_get_attn_spec_kind(fields, kind):
    assert vllm.kv_cache_kind(attnsel.Query(**fields)) == kind


def test_backend_per_kind_from_the_json_flag_and_the_dotted_flags():
    o = vllm.parse_flags(
        "vllm serve m --attention-backend FLASHINFER "
        "--attention-config '{\"backend_per_kind\": {\"full_attention\": \"flash_attn\", "
        "\"sliding_window\": \"TRITON_ATTN\"}}'"
    )
    assert o.decoder == "FLASHINFER"
    assert o.backend_per_kind == (("full_attention", "FLASH_ATTN"), ("sliding_window", "TRITON_ATTN"))
    same = vllm.parse_flags(["-ac.backend_per_kind.full_attention=FLASH_ATTN",
                             "-ac.backend_per_kind.sliding_window", "TRITON_ATTN", "-ac.backend", "FLASHINFER"])
    assert same == o
    assert vllm.parse_flags(["-ac.backend_per_kind", '{"mla_attention": "TRITON_MLA"}']).backend_for_kind(
        "mla_attention") == "TRITON_MLA"


def test_the_per_kind_backend_is_forced_else_the_general_one():
    o = vllm.parse_flags(
        "--attention-backend FLASHINFER -ac '{\"backend_per_kind\": {\"sliding_window\": \"TRITON_ATTN\"}}'")
    sliding = attnsel.Query(features=["sliding_window"])
    full = attnsel.Query()
    assert o.for_query(sliding) == "TRITON_ATTN"
    assert o.for_query(full) == "FLASHINFER"
    # Without a general backend, a kind the map does not name is automatic.
    auto = vllm.parse_flags("-ac.backend_per_kind.sliding_window=TRITON_ATTN")
    assert auto.for_query(full) is None
    # The override attnsel applies: the per-kind backend is forced (a rejected one fails, no fallback).
    reg = attnsel.reference_registry()
    hopper = attnsel.Platform.cuda(9, 0)
    assert attnsel.select(reg, sliding, hopper, o.override_set(query=sliding)).backend == "TRITON_ATTN"
    assert attnsel.select(reg, full, hopper, auto.override_set(query=full)).backend == "FLASH_ATTN"
    small = attnsel.Query(head_size=16, features=["sliding_window"])
    with pytest.raises(attnsel.SelectionError) as e:
        attnsel.select(reg, small, hopper, o.override_set(query=small))
    assert e.value.code == "backend_rejected"


def test_sliding_window_from_a_model_config_routes_by_kind():
    q = attnsel.Query.from_model_config(GEMMA2)
    o = vllm.parse_flags("-ac.backend_per_kind.sliding_window=TRITON_ATTN")
    assert vllm.kv_cache_kind(q) == "sliding_window" and o.for_query(q) == "TRITON_ATTN"


def test_decode_backend_and_auto():
    # PR #48162's flags, which no vLLM release has (0.33.0's parser refuses them): read with a warning.
    with pytest.warns(UserWarning, match="--attention-decode-backend: vLLM PR #48162's per-phase setting, which "
                                         "vLLM 0.33.0 refuses") as seen:
        o = vllm.parse_flags("--attention-backend TRITON_ATTN --attention-decode-backend FLASHINFER")
    assert len(seen) == 1 and seen[0].filename == __file__  # once, pointing at the caller
    q = attnsel.Query()
    assert o.for_query(q.replace(phase="prefill")) == "TRITON_ATTN"
    assert o.for_query(q.replace(phase="decode")) == "FLASHINFER"
    assert o.for_query(q) == "TRITON_ATTN"
    s = o.override_set(query=q)
    assert (s.decoder, s.prefill, s.decode) == ("TRITON_ATTN", "TRITON_ATTN", "FLASHINFER")
    # The PR's alias and attention_config keys say the same; 'auto' is automatic.
    with pytest.warns(UserWarning, match="PR #48162") as seen:
        assert vllm.parse_flags("--attention-prefill-backend TRITON_ATTN -ac.decode_backend=flashinfer") == o
    assert [w.filename for w in seen] == [__file__, __file__]
    assert vllm.parse_flags("--attention-backend auto").decoder is None
    # Each phase reads its own override (PR #48162's example: B200, TRITON_ATTN + FLASHINFER).
    b200 = attnsel.Platform.cuda(10, 0, components=["flashinfer"])
    reg = attnsel.reference_registry()
    assert attnsel.select(reg, q.replace(phase="prefill"), b200, s).backend == "TRITON_ATTN"
    assert attnsel.select(reg, q.replace(phase="decode", seq_len_q=1), b200, s).backend == "FLASHINFER"


def test_mla_prefill_backend_is_its_own_override():
    o = vllm.parse_flags("--attention-backend FLASHINFER_MLA -ac.mla_prefill_backend=TRTLLM_RAGGED")
    assert o.mla_prefill == "MLA_PREFILL_TRTLLM_RAGGED"
    decode_q = attnsel.Query.from_model_config(DEEPSEEK, tp=8)
    prefill_q = vllm.mla_prefill_query(DEEPSEEK, tp=8)
    assert (prefill_q.head_size, prefill_q.head_size_v, prefill_q.phase) == (192, 128, "prefill")
    assert o.for_query(prefill_q) == "MLA_PREFILL_TRTLLM_RAGGED"
    assert o.for_query(decode_q) == "FLASHINFER_MLA"  # the decode (layer) backend
    # The general backend never reaches the MLA prefill selector.
    assert vllm.parse_flags("--attention-backend FLASHINFER_MLA").for_query(prefill_q) is None
    reg = attnsel.reference_registry()
    b200 = attnsel.Platform.cuda(10, 0, components=["flashinfer"])
    assert attnsel.select(reg, prefill_q, b200).backend == "MLA_PREFILL_FLASH_ATTN"
    forced = attnsel.select(reg, prefill_q, b200, o.override_set(query=prefill_q))
    assert forced.backend == "MLA_PREFILL_TRTLLM_RAGGED"
    # vLLM raises for an invalid mla_prefill_backend (selector.py @04331387): forced, no fallback.
    with pytest.raises(attnsel.SelectionError) as e:
        attnsel.select(reg, prefill_q, attnsel.Platform.cuda(9, 0), o.override_set(query=prefill_q))
    assert e.value.code == "backend_rejected"
    with pytest.raises(ValueError, match="does not use MLA"):
        vllm.mla_prefill_query(GEMMA2)


def test_mla_prefill_names_both_ways():
    assert vllm.to_mla_prefill("flash_attn") == "MLA_PREFILL_FLASH_ATTN"
    assert vllm.to_mla_prefill("TOKENSPEED_MLA") == "MLA_PREFILL_TOKENSPEED"
    assert vllm.to_vllm_mla_prefill("MLA_PREFILL_TOKENSPEED") == "TOKENSPEED_MLA"
    assert vllm.to_vllm_mla_prefill("MLA_PREFILL_TRTLLM_RAGGED") == "TRTLLM_RAGGED"
    with pytest.raises(ValueError):
        vllm.to_vllm_mla_prefill("FLASH_ATTN")


def test_flags_write_the_attention_config():
    args = vllm.flags("FLASHINFER_MLA", mla_prefill="MLA_PREFILL_FLASHINFER",
                      backend_per_kind={"sliding_window": "TRITON_ATTN"})
    assert args[:2] == ["--attention-backend", "FLASHINFER_MLA"]
    assert args[2] == "--attention-config"
    assert json.loads(args[3]) == {"mla_prefill_backend": "FLASHINFER",
                                   "backend_per_kind": {"sliding_window": "TRITON_ATTN"}}
    back = vllm.parse_flags(args)
    assert (back.decoder, back.decode, back.mla_prefill) == ("FLASHINFER_MLA", None, "MLA_PREFILL_FLASHINFER")
    # No release has a decode-phase flag: asking for one is refused, naming the PR and the release.
    with pytest.raises(ValueError, match="vLLM 0.33.0 has no decode-phase backend flag .*PR #48162"):
        vllm.flags("FLASHINFER_MLA", decode="FLASHINFER")
    assert back.backend_per_kind == (("sliding_window", "TRITON_ATTN"),)


@pytest.mark.parametrize(
    "args,message",
    [
        ("-ac.backend_per_kind.full=FLASH_ATTN", "not a KV-cache kind"),
        ("--attention-config '[1]'", "expected a JSON object"),
        ("--attention-config '{oops'", "not JSON"),
        ("--attention-decode-backend", "needs a value"),
        ("-ac '{\"backend_per_kind\": [\"FLASH_ATTN\"]}'", "expected an object"),
        ("-ac '{\"mla_prefill_backend\": 3}'", "expected a backend name"),
    ],
)
def test_bad_flags_are_errors(args, message):
    with pytest.raises(ValueError, match=message):
        vllm.parse_flags(args)
