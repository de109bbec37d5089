# SPDX-License-Identifier: Apache-2.0
"""The drafter and linear domains from Python: OverrideSet's entries, drafting as the decoder, linear kinds."""
import pickle

import pytest

import attnsel


def test_override_set_carries_the_drafter_and_linear_entries():
    inherit = attnsel.OverrideSet(decoder="TRITON_ATTN")
    assert inherit.drafter is None and inherit.linear == ""
    assert inherit.for_domain("drafter") == "TRITON_ATTN"
    own = attnsel.OverrideSet(decoder="TRITON_ATTN", drafter="auto", linear="GDN_ATTN")
    assert (own.for_domain("drafter"), own.for_domain("linear"), own.for_domain("encoder")) == ("auto", "GDN_ATTN", "")
    assert "drafter='auto'" in repr(own) and "linear='GDN_ATTN'" in repr(own)
    assert pickle.loads(pickle.dumps(own)) == own and own != inherit
    assert hash(pickle.loads(pickle.dumps(own))) == hash(own)


def test_the_drafter_drafts_as_the_decoder_and_inherits_its_override():
    reg = attnsel.builtin_catalog("vllm@0.33.0")
    p = attnsel.Platform.cuda(9, 0)
    drafter = attnsel.Query(domain="drafter")
    assert attnsel.select(reg, drafter, p).backend == attnsel.select(reg, attnsel.Query(), p).backend
    inherit = attnsel.OverrideSet(decoder="TRITON_ATTN")
    assert attnsel.select(reg, drafter, p, inherit).backend == "TRITON_ATTN"
    assert attnsel.Selector(reg, p, inherit).select(drafter).backend == "TRITON_ATTN"
    own = attnsel.OverrideSet(decoder="TRITON_ATTN", drafter="auto")
    assert attnsel.select(reg, drafter, p, own).backend == "FLASH_ATTN"
    assert attnsel.Selector(reg, p, own).select(drafter).backend == "FLASH_ATTN"


def test_a_linear_phase_reads_its_own_override_and_inherits_the_linear_one():
    o = attnsel.OverrideSet(linear="TRITON_LINEAR", linear_decode="CUTEDSL")
    assert (o.linear, o.linear_prefill, o.linear_decode) == ("TRITON_LINEAR", None, "CUTEDSL")
    assert "linear_decode='CUTEDSL'" in repr(o) and "linear_prefill" not in repr(o)
    assert o == attnsel.OverrideSet(linear="TRITON_LINEAR", linear_decode="CUTEDSL") != attnsel.OverrideSet(linear="TRITON_LINEAR")
    assert pickle.loads(pickle.dumps(o)) == o
    reg, p = attnsel.builtin_catalog("sglang"), attnsel.Platform.cuda(10, 0)
    answers = {}
    for phase in ("prefill", "decode", None):
        q = attnsel.Query(domain="linear", mode="gated_delta", phase=phase)
        free = attnsel.select(reg, q, p, o)
        assert attnsel.Selector(reg, p, o).select(q).backend == free.backend
        answers[phase] = (free.backend, free.overridden)
    assert answers == {"prefill": ("TRITON_LINEAR", True), "decode": ("CUTEDSL", True), None: ("TRITON_LINEAR", True)}
    with pytest.raises(TypeError, match="linear_decode"):
        attnsel.OverrideSet(linear_decode=3)


def test_a_linear_layer_gets_the_backend_of_its_kind():
    reg = attnsel.builtin_catalog("vllm@0.33.0")
    p = attnsel.Platform.cuda(10, 0)
    kinds = {"gated_delta": "GDN_ATTN", "mamba1": "MAMBA1_ATTN", "mamba2": "MAMBA2_ATTN",
             "short_conv": "SHORT_CONV_ATTN", "lightning": "LINEAR_ATTN"}
    for mode, name in kinds.items():
        q = attnsel.Query(domain="linear", mode=mode)
        assert attnsel.select(reg, q, p).backend == name
        forced = attnsel.select(reg, q, p, attnsel.OverrideSet(linear="FLASH_ATTN"))
        assert forced.backend == name and forced.fell_back
    err = attnsel.select(reg, attnsel.Query(domain="linear", mode="mamba2", features=["batch_invariant"]), p,
                         raise_on_error=False)
    assert isinstance(err, attnsel.SelectionError) and err.code == "no_backend"
