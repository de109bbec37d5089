# SPDX-License-Identifier: Apache-2.0
# Error paths: SelectionError for each code, ValueError wording shared with the CLI, CatalogError.
import pytest

import attnsel


def test_selection_error_is_a_value_error_with_the_cpp_fields(reference, hopper):
    with pytest.raises(attnsel.SelectionError) as info:
        attnsel.select(reference, attnsel.Query(dtype="float32"), hopper, override="FLASH_ATTN")
    e = info.value
    assert isinstance(e, ValueError)
    assert e.code == "backend_rejected"
    assert str(e) == e.message and "FLASH_ATTN" in e.message
    assert [c.name for c in e.candidates] == ["FLASH_ATTN"]
    assert e.candidates[0].forced and e.candidates[0].verdict == "rejected"
    assert "dtype" in {r.code for r in e.candidates[0].reasons}
    assert e.suggestions and all(isinstance(s, str) for s in e.suggestions)
    assert "FLASH_ATTN" not in e.suggestions


@pytest.mark.parametrize("override, code", [
    ("NOPE_ATTN", "unknown_backend"),
    ("FLASH_ATTN,,TRITON_ATTN", "bad_override"),
    ("auto,auto", "bad_override"),
    ("-auto", "bad_override"),
    ("FLASH_ATTN,FLASH_ATTN", "bad_override"),
    ("FLASH_ATTN,-TRITON_ATTN", "bad_override"),
])
def test_bad_overrides_raise_with_their_code(reference, hopper, override, code):
    with pytest.raises(attnsel.SelectionError) as info:
        attnsel.select(reference, attnsel.Query(), hopper, override=override)
    assert info.value.code == code


def test_unknown_backend_suggests_the_closest_name(reference, hopper):
    e = attnsel.select(reference, attnsel.Query(), hopper, override="FLASH_ATN", raise_on_error=False)
    assert e.code == "unknown_backend" and "FLASH_ATTN" in e.message


def test_no_backend_and_bad_query(reference):
    e = attnsel.select(reference, attnsel.Query(kv_cache_dtype="fp8_ds_mla"), attnsel.Platform.cpu(),
                       raise_on_error=False)
    assert isinstance(e, attnsel.SelectionError) and e.code == "no_backend"
    assert e.candidates and all(c.verdict != "selected" for c in e.candidates)
    # The constructor refuses out-of-range fields; a query read from JSON is checked by the selector.
    e = attnsel.select(reference, attnsel.Query.from_json('{"head_size": 0}'), attnsel.Platform.cpu(),
                       raise_on_error=False)
    assert e.code == "bad_query" and "head" in e.message


def test_raise_on_error_false_returns_the_error_and_explain_carries_it(reference, hopper):
    e = attnsel.select(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN", raise_on_error=False)
    assert isinstance(e, attnsel.SelectionError) and e.code == "backend_rejected"
    ex = attnsel.explain(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN")
    assert not ex.ok and ex.result.code == "backend_rejected" and ex.result.message == e.message


@pytest.mark.parametrize("make, message", [
    (lambda: attnsel.Query(dtype="float8"), "dtype: 'float8' is not one of float16, bfloat16, float32"),
    (lambda: attnsel.Query(head_size=-1), "head_size: -1 is outside 1..65536"),
    (lambda: attnsel.Query(head_size=0), "head_size: 0 is outside 1..65536"),
    (lambda: attnsel.Query(block_size=0), "block_size: 0 is outside 1..1048576"),
    (lambda: attnsel.Query(kv_cache_dtype="fp4"), "kv_cache_dtype: 'fp4' is not one of auto, float16"),
    (lambda: attnsel.Query(attn_type="causal_lm"), "attn_type: 'causal_lm' is not one of decoder, encoder"),
    (lambda: attnsel.Query(mode="dense"), "mode: 'dense' is not one of standard, mla, sparse_mla"),
    (lambda: attnsel.Query(domain="vision_tower"), "domain: 'vision_tower' is not one of decoder, encoder"),
    (lambda: attnsel.Query(features={"Sinks"}), "features: 'Sinks' is not a lower_snake feature name"),
    (lambda: attnsel.Platform("gpu"), "vendor: 'gpu' is not one of cuda, rocm, xpu, cpu, tpu"),
    (lambda: attnsel.Platform.rocm("gfx9000"), "arch: 'gfx9000' is not a gfx target (e.g. gfx942, gfx90a, gfx1100)"),
    (lambda: attnsel.Platform.cuda("sm_9"), "arch: 'sm_9' is not a CUDA compute capability"),
    (lambda: attnsel.Platform.cuda(9, 10), "capability: 9.10 is not a CUDA compute capability"),
    (lambda: attnsel.Platform("cpu", "9.0"), "arch: '9.0' does not apply to platform cpu"),
    (lambda: attnsel.Platform.cpu(components=["Bad Name"]), "components: 'Bad Name' needs a lower_snake NAME"),
    (lambda: attnsel.Platform.cpu(components=["flashinfer=x.y"]), "with a dotted numeric version"),
    (lambda: attnsel.builtin_catalog("trtllm"), "catalog: 'trtllm' is not one of vllm, vllm@0.33.0, vllm@main-2026-12, vllm@00159db, vllm@0013943, vllm-rocm-env@e2a00c7b, torch_sdpa, torch_sdpa@2.14.0, sglang, sglang@0.5.23, sglang@main-2026-12"),
    (lambda: attnsel.OverrideSet(source="cli"), "source: 'cli' is not one of none, api, flag, env, config, engine"),
    (lambda: attnsel.Query.from_json("{"), "query: /: malformed JSON"),
    (lambda: attnsel.Platform.from_json('{"arch": "9.0"}'), 'platform: missing required key "vendor"'),
])
def test_bad_arguments_raise_value_error_with_the_cli_wording(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert not isinstance(info.value, attnsel.SelectionError)
    assert message in str(info.value)


def test_wrong_types_raise_type_error(reference, hopper):
    with pytest.raises(TypeError):
        attnsel.Query(features="sinks")
    with pytest.raises(TypeError):
        attnsel.Query(head_size="64")
    with pytest.raises(TypeError):
        attnsel.select(reference, attnsel.Query(), hopper, override=3)
    with pytest.raises(TypeError):
        attnsel.Platform.cpu(components="aiter")


def test_catalog_error_names_the_file_and_the_json_pointer(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attnsel-catalog", "version": 1, "name": "x", "backends": [{"name": 3}]}')
    with pytest.raises(attnsel.CatalogError) as info:
        attnsel.load_catalog(bad)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.origin == str(bad) and e.pointer == "/backends/0/name" and e.problem
    assert str(e).startswith(f"{bad}: /backends/0/name: ")
    with pytest.raises(attnsel.CatalogError, match="missing.json"):
        attnsel.load_catalog(tmp_path / "missing.json")
    with pytest.raises(attnsel.CatalogError):
        attnsel.parse_catalog("not json")


def test_a_failed_merge_leaves_the_registry_unchanged(tmp_path, reference):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    reg = reference.copy()
    with pytest.raises(attnsel.CatalogError):
        reg.merge(bad)
    assert reg == reference
