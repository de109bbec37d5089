# SPDX-License-Identifier: Apache-2.0
# The override grammar from Python: strict names, lists, auto, exclusions, domains, prefer mode.
import pytest

import attnsel

FP32 = attnsel.Query(dtype="float32")  # FLASH_ATTN takes float16 and bfloat16 only


@pytest.mark.parametrize("spec", [None, "", "auto", " AUTO "])
def test_empty_and_auto_select_in_policy_order(reference, hopper, spec):
    automatic = attnsel.select(reference, attnsel.Query(), hopper)
    s = attnsel.select(reference, attnsel.Query(), hopper, spec)
    assert (s.backend, s.rank, s.overridden) == (automatic.backend, automatic.rank, False)


def test_names_are_case_insensitive_and_aliases_resolve(reference, hopper):
    assert attnsel.select(reference, attnsel.Query(), hopper, " triton_attn ").backend == "TRITON_ATTN"


def test_a_list_tries_each_name_in_order_and_never_substitutes(reference, hopper):
    s = attnsel.select(reference, FP32, hopper, "FLASH_ATTN,TRITON_ATTN")
    assert (s.backend, s.rank, s.overridden) == ("TRITON_ATTN", 2, True)
    e = attnsel.select(reference, FP32, hopper, "FLASH_ATTN", raise_on_error=False)
    assert e.code == "backend_rejected"


def test_name_then_auto_falls_through_to_the_policy(reference, hopper):
    s = attnsel.select(reference, FP32, hopper, "FLASH_ATTN,auto")
    assert s.backend != "FLASH_ATTN" and s.rank > 1
    assert s == attnsel.select(reference, FP32, hopper, "flash_attn , auto")


def test_an_exclusion_removes_a_backend_from_automatic_selection(reference, hopper):
    first = attnsel.select(reference, attnsel.Query(), hopper).backend
    s = attnsel.select(reference, attnsel.Query(), hopper, f"-{first}")
    assert s.backend != first and not s.overridden
    ex = attnsel.explain(reference, attnsel.Query(), hopper, f"-{first}")
    excluded = next(c for c in ex.candidates if c.name == first)
    assert [r.code for r in excluded.reasons] == ["excluded"] and excluded.verdict == "skipped"


def test_override_set_applies_the_queries_domain_entry():
    reg = attnsel.reference_registry()
    p = attnsel.Platform.rocm("gfx942", components=["aiter", "aiter_enabled", "aiter_mha", "flash_attn"])
    encoder = attnsel.Query(domain="encoder", attn_type="encoder_only", head_size=80)
    decoder = attnsel.Query()
    automatic = attnsel.select(reg, encoder, p)
    assert automatic.backend != "TORCH_SDPA"
    both = attnsel.OverrideSet(decoder="TRITON_ATTN", encoder="TORCH_SDPA", source="flag")
    forced = attnsel.select(reg, encoder, p, both)
    assert (forced.backend, forced.overridden, forced.source) == ("TORCH_SDPA", True, "flag")
    assert attnsel.select(reg, decoder, p, both).backend == "TRITON_ATTN"
    # A decoder override never changes an encoder selection.
    only_decoder = attnsel.OverrideSet(decoder="TRITON_ATTN")
    assert attnsel.select(reg, encoder, p, only_decoder) == automatic
    assert only_decoder.for_domain("encoder") == "" and only_decoder.for_domain("lm") == "TRITON_ATTN"
    assert repr(both) == "attnsel.OverrideSet(decoder='TRITON_ATTN', encoder='TORCH_SDPA', source='flag')"
    assert (only_decoder.decoder, only_decoder.encoder, only_decoder.source) == ("TRITON_ATTN", "", "api")


def test_prefer_falls_back_and_says_why(reference, hopper):
    s = attnsel.select(reference, FP32, hopper, "FLASH_ATTN", prefer=True)
    assert s.fell_back and s.backend != "FLASH_ATTN" and not s.overridden
    assert [c.name for c in s.fallback] == ["FLASH_ATTN"]
    assert "dtype" in {r.code for r in s.fallback[0].reasons}
    assert "fell_back=True" in repr(s)
    # prefer never hides a malformed override
    assert attnsel.select(reference, FP32, hopper, "NOPE", prefer=True, raise_on_error=False).code == "unknown_backend"
