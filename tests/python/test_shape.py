# SPDX-License-Identifier: Apache-2.0
"""Catalog format 2 from Python: the call's fields on Query, per-phase overrides, explain's `unstated`."""
import json
import pickle

import pytest

import attnsel


def h200():
    return attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred"])


def test_query_call_fields_default_unstated_and_round_trip():
    q = attnsel.Query()
    assert (q.phase, q.seq_len_q, q.seq_len_kv, q.batch_size, q.num_kv_heads) == (None, None, None, None, None)
    d = attnsel.Query(phase="decode", seq_len_q=1, seq_len_kv=4096, batch_size=8, num_heads=32, num_kv_heads=8)
    assert d.phase == "decode" and d.seq_len_kv == 4096 and d.num_kv_heads == 8
    assert eval(repr(d), {"attnsel": attnsel}) == d
    assert pickle.loads(pickle.dumps(d)) == d
    assert attnsel.Query.from_json(attnsel.to_json(d)) == d
    assert hash(d) == hash(d.replace())
    assert d != d.replace(seq_len_kv=4097)
    assert attnsel.Query(phase="unstated") == attnsel.Query()
    with pytest.raises(ValueError, match="phase"):
        attnsel.Query(phase="decoding")
    with pytest.raises(TypeError, match="seq_len_q"):
        attnsel.Query(seq_len_q=True)


def test_shape_rules_decide_on_the_h200_platform():
    reg = attnsel.torch_sdpa_registry()
    q = attnsel.Query(head_size=64, dtype="float16", attn_type="encoder_only", seq_len_q=16, seq_len_kv=1)
    assert attnsel.select(reg, q, h200()).backend == "FLASH_ATTENTION"  # cuDNN refuses key length 1
    assert attnsel.select(reg, q.replace(seq_len_kv=None), h200()).backend == "CUDNN_ATTENTION"
    e = attnsel.explain(reg, q.replace(seq_len_kv=None), h200())
    assert any(u["fields"] == "seq_len_kv" for u in json.loads(attnsel.to_json(e))["unstated"])


def test_override_set_phases_inherit_the_decoder_override():
    o = attnsel.OverrideSet(decoder="TRITON_ATTN", decode="FLASHINFER")
    assert (o.prefill, o.decode) == (None, "FLASHINFER")
    assert pickle.loads(pickle.dumps(o)) == o
    assert eval(repr(o), {"attnsel": attnsel}) == o
    reg = attnsel.reference_registry()
    p = attnsel.Platform.cuda(9, 0, components=["flashinfer"])
    assert attnsel.select(reg, attnsel.Query(phase="decode"), p, o).backend == "FLASHINFER"
    assert attnsel.select(reg, attnsel.Query(phase="prefill"), p, o).backend == "TRITON_ATTN"
    assert attnsel.select(reg, attnsel.Query(), p, o).backend == "TRITON_ATTN"


@pytest.mark.parametrize("make, name, hint", [
    (lambda: attnsel.OverrideSet(decodr="X"), "decodr", "decoder"),
    (lambda: attnsel.Platform.cuda(9, 0, component=["x"]), "component", "components"),
    (lambda: attnsel.Platform.rocm("gfx942", componets=[]), "componets", "components"),
    (lambda: attnsel.Platform("cuda", arc="9.0"), "arc", "arch"),
    (lambda: attnsel.Reason(cod="feature", message="m"), "cod", "code"),
    (lambda: attnsel.Candidate(nam="X"), "nam", "name"),
])
def test_every_constructor_names_a_mistyped_keyword(make, name, hint):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'; did you mean '{hint}'"):
        make()
