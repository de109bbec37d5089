# SPDX-License-Identifier: Apache-2.0
# The Python API over the C++ core: registries, platforms, queries, select, explain, to_json.
import json
import os
import subprocess

import pytest

import attnsel


def test_select_returns_backend_variant_rank_and_override_flag(reference, mi300):
    q = attnsel.Query(head_size=64, features={"sinks"})
    s = attnsel.select(reference, q, mi300)
    assert (s.backend, s.rank, s.overridden, s.source, s.fell_back) == ("ROCM_AITER_UNIFIED_ATTN", 2, False, "none", False)
    assert isinstance(s.variant, str)
    assert str(s) == "ROCM_AITER_UNIFIED_ATTN"
    assert repr(s).startswith("<attnsel.Selection backend='ROCM_AITER_UNIFIED_ATTN'")


def test_forced_backend_is_reported_as_overridden(reference, mi300):
    s = attnsel.select(reference, attnsel.Query(), mi300, override="TRITON_ATTN")
    assert (s.backend, s.overridden, s.source, s.rank) == ("TRITON_ATTN", True, "api", 1)


def test_explain_lists_every_candidate_with_verdicts_and_reason_codes(reference, mi300):
    ex = attnsel.explain(reference, attnsel.Query(head_size=64, features={"sinks"}), mi300)
    assert ex.ok and ex.result.backend == "ROCM_AITER_UNIFIED_ATTN"
    first = ex.candidates[0]
    assert (first.name, first.verdict, first.rank) == ("ROCM_ATTN", "rejected", 1)
    assert [r.code for r in first.reasons] == ["feature"]
    assert "sinks" in first.reasons[0].message
    assert [(c.name, c.rank) for c in ex.candidates if c.verdict == "selected"] == [("ROCM_AITER_UNIFIED_ATTN", 2)]
    assert {c.verdict for c in ex.candidates} <= set(attnsel.VERDICTS)
    assert all(r.code in attnsel.REASON_CODES for c in ex.candidates for r in c.reasons)
    assert ex.rule and isinstance(ex.note, str)
    assert "ROCM_AITER_UNIFIED_ATTN" in repr(ex)


def test_to_json_is_the_document_the_cli_prints(reference, mi300, tmp_path):
    q = attnsel.Query(head_size=64, features={"sinks"})
    doc = json.loads(attnsel.to_json(attnsel.explain(reference, q, mi300, "TRITON_ATTN,auto")))
    assert doc["backend"] == "TRITON_ATTN"
    assert doc["platform"] == json.loads(attnsel.to_json(mi300))
    assert doc["query"] == json.loads(attnsel.to_json(q))
    cli = os.environ.get("ATTNSEL_CLI")
    if not cli:
        pytest.skip("ATTNSEL_CLI not set (ctest sets it when the CLI is built)")
    out = subprocess.run(
        [cli, "select", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--component", "aiter",
         "--head-size", "64", "--feature", "sinks", "--backend", "TRITON_ATTN,auto"],
        check=True, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}).stdout
    cli_doc = json.loads(out)
    # The CLI records its override as coming from a flag; the library call from the API.
    cli_doc["override"].pop("source", None)
    doc["override"].pop("source", None)
    assert doc == cli_doc


def test_to_json_of_platform_query_candidate_and_registry(reference, mi300):
    assert json.loads(attnsel.to_json(mi300))["vendor"] == "rocm"
    assert json.loads(attnsel.to_json(attnsel.Query(block_size=16)))["block_size"] == 16
    c = attnsel.explain(reference, attnsel.Query(), mi300).candidates[0]
    assert json.loads(attnsel.to_json(c))["name"] == c.name
    catalog = json.loads(attnsel.to_json(reference, indent=-1))
    assert catalog["name"] == "vllm@0.33.0" and len(catalog["backends"]) == len(reference)
    assert "\n" not in attnsel.to_json(mi300, indent=-1)


def test_builtin_registries(reference):
    sdpa = attnsel.torch_sdpa_registry()
    assert sdpa.backends == ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH", "CUDNN_ATTENTION"]
    assert attnsel.builtin_catalog("torch_sdpa") == sdpa
    assert attnsel.builtin_catalog("vllm") == reference
    assert attnsel.BUILTIN_CATALOGS == ("vllm", "vllm@0.33.0", "vllm@main-2026-12", "vllm@00159db", "vllm@0013943",
                                        "vllm-rocm-env@e2a00c7b", "torch_sdpa", "torch_sdpa@2.14.0", "sglang",
                                        "sglang@0.5.23",
                                        "sglang@main-2026-12")
    assert reference.name == "vllm@0.33.0" and reference.description and reference.source
    assert attnsel.builtin_catalog("vllm@0.33.0") == reference
    assert "FLASH_ATTN" in reference and "flash_attn" in reference and "NOPE" not in reference and 3 not in reference
    assert reference.names == sorted(reference.names) and set(reference.backends) <= set(reference.names)
    assert repr(reference).startswith("<attnsel.Registry 'vllm@0.33.0': ")


def test_load_catalog_and_merge_layer_an_engine_catalog(tmp_path, reference):
    engine = json.loads(attnsel.to_json(attnsel.torch_sdpa_registry()))
    engine["name"] = "engine"
    engine["policies"] = []
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(engine))
    loaded = attnsel.load_catalog(path)          # os.PathLike
    assert loaded.name == "engine" and len(loaded) == 4
    assert attnsel.load_catalog(str(path)) == loaded

    reg = reference.copy()
    reg.merge(str(path))
    assert len(reg) == len(reference) + 4 and "MATH" in reg
    assert len(reference) == len(attnsel.reference_registry())   # the copy was independent
    reg2 = reference.copy()
    reg2.merge(loaded)
    assert reg2 == reg
    s = attnsel.select(reg, attnsel.Query(), attnsel.Platform.cuda(9, 0), override="MATH")
    assert s.backend == "MATH"


def test_a_selection_outlives_a_merge_of_its_registry(tmp_path):
    reg = attnsel.reference_registry()
    s = attnsel.select(reg, attnsel.Query(), attnsel.Platform.cuda(9, 0))
    before = s.backend
    reg.merge(attnsel.torch_sdpa_registry())
    del reg
    assert s.backend == before and s.variant is not None


def test_built_in_registries_are_independent_values_though_parsed_once():
    """builtin_catalog() parses each catalog once and its Registry objects share it: a merge into one must
    leave every other, and every later one, as the catalog says."""
    # `vllm` and `sglang` are aliases: their registries carry the release they stand for.
    for make, name in ((attnsel.reference_registry, "vllm@0.33.0"), (attnsel.torch_sdpa_registry, "torch_sdpa"),
                       (lambda: attnsel.builtin_catalog("sglang"), "sglang@0.5.23")):
        a, b = make(), make()
        assert a == b and a is not b and a.name == name
        size = len(a)
        a.merge(attnsel.parse_catalog(json.dumps({
            "format": "attnsel-catalog", "version": 1, "name": "extra",
            "backends": [{"name": "EXTRA_BACKEND", "domains": ["decoder"]}], "policies": []})))
        assert len(a) == size + 1 and "EXTRA_BACKEND" in a
        assert len(b) == size and "EXTRA_BACKEND" not in b
        assert len(make()) == size and "EXTRA_BACKEND" not in make()


def test_platform_constructors_and_properties():
    p = attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred"])
    assert (p.vendor, p.arch, p.capability) == ("cuda", "9.0", (9, 0))
    assert p.components == {"cudnn": "9.19.0", "cudnn_preferred": None}
    assert p.has_component("cudnn") and not p.has_component("flashinfer")
    assert repr(p) == "attnsel.Platform.cuda(9, 0, components=['cudnn=9.19.0', 'cudnn_preferred'])"
    assert str(p).startswith("cuda 9.0")
    assert attnsel.Platform.cuda("sm_90") == attnsel.Platform.cuda(9, 0)
    assert attnsel.Platform("cuda", "12.1") == attnsel.Platform.cuda(12, 1)
    r = attnsel.Platform.rocm("gfx942", components={"aiter": None, "flash_attn": "2.7.4"})
    assert (r.vendor, r.arch, r.capability) == ("rocm", "gfx942", None)
    assert repr(r) == "attnsel.Platform.rocm('gfx942', components=['aiter', 'flash_attn=2.7.4'])"
    assert repr(attnsel.Platform.cpu()) == "attnsel.Platform.cpu()" and attnsel.Platform.xpu().vendor == "xpu"
    assert attnsel.Platform.cpu().arch is None
    more = p.with_components("flashinfer=0.2.5")
    assert more.components["flashinfer"] == "0.2.5" and "flashinfer" not in p.components
    named = p.with_device_name("NVIDIA H200")
    assert named.device_name == "NVIDIA H200" and p.device_name is None and named != p
    assert repr(named) == repr(p) + ".with_device_name('NVIDIA H200')"
    assert named.with_device_name(None) == p
    with pytest.raises(ValueError, match="names no device"):
        p.with_device_name("")
    for platform in (p, r, named, attnsel.Platform.cpu(), attnsel.Platform("tpu")):
        assert eval(repr(platform), {"attnsel": attnsel}) == platform
        assert hash(platform) == hash(eval(repr(platform), {"attnsel": attnsel}))
    assert attnsel.Platform.from_json(attnsel.to_json(r)) == r
    assert attnsel.Platform.from_json(attnsel.to_json(named)) == named


def test_query_fields_defaults_and_replace():
    q = attnsel.Query()
    assert (q.head_size, q.head_size_v, q.dtype, q.kv_cache_dtype, q.block_size, q.attn_type, q.mode, q.domain,
            q.num_heads, q.features) == (128, None, "bfloat16", "auto", None, "decoder", "standard", "decoder", None,
                                         frozenset())
    q = attnsel.Query(head_size=64, head_size_v=128, dtype="fp16", kv_cache_dtype="fp8", block_size=16,
                      attn_type="encoder_only", mode="mla", domain="encoder", num_heads=8, features=["sinks", "alibi"])
    assert (q.dtype, q.kv_cache_dtype, q.head_size_v, q.features) == ("float16", "fp8", 128, frozenset({"sinks", "alibi"}))
    assert eval(repr(q), {"attnsel": attnsel}) == q
    r = q.replace(head_size=256, features=())
    assert (r.head_size, r.features, q.head_size) == (256, frozenset(), 64)
    assert hash(attnsel.Query(head_size=64)) == hash(attnsel.Query(head_size=64))
    assert "head_size=64" in str(q)
    with pytest.raises(AttributeError):
        q.head_size = 3   # immutable: select() reads it without the GIL
    with pytest.raises(TypeError, match="unexpected keyword argument 'head'"):
        q.replace(head=3)
    assert attnsel.Query.from_json('{"head_size": 80, "features": ["sinks"]}') == attnsel.Query(head_size=80, features={"sinks"})


def test_query_fields_and_their_docs_come_from_the_core_field_list():
    # The JSON the core writes names the list's fields; each is a keyword and a documented property, and a
    # field that reads None when unstated says so in its docstring.
    listed = set(json.loads(attnsel.to_json(attnsel.Query())))
    assert listed == {name for name in dir(attnsel.Query) if not name.startswith("_")} - {"replace", "from_json",
                                                                                         "from_model_config"}
    for name in listed:
        doc = getattr(attnsel.Query, name).__doc__
        assert doc and doc.endswith("."), name
        assert ("None:" in doc) == (getattr(attnsel.Query(), name) is None), name
    assert "phase: Phase of the call: unstated, prefill, decode; None: unstated: the layer as a whole." in \
        attnsel.Query.__doc__


def test_vocabularies_come_from_the_enum_tables():
    assert attnsel.DTYPES == ("float16", "bfloat16", "float32")
    assert attnsel.ERROR_CODES == ("unknown_backend", "backend_rejected", "no_backend", "bad_override", "bad_query")
    assert "auto" in attnsel.KV_CACHE_DTYPES and "sinks" in attnsel.FEATURES and "excluded" in attnsel.REASON_CODES
    assert attnsel.DOMAINS == ("decoder", "encoder", "drafter", "linear") and "mla" in attnsel.MODES and "encoder_only" in attnsel.ATTN_TYPES
    assert "rocm" in attnsel.VENDORS and "env" in attnsel.OVERRIDE_SOURCES


def test_block_size_negotiation(reference, hopper):
    s = attnsel.select(reference, attnsel.Query(), hopper)
    assert s.block_size_for(16) == 16


def test_version():
    assert attnsel.__version__.count(".") == 2


def test_a_catalog_states_its_engines_stock_install():
    vllm = attnsel.builtin_catalog("vllm")
    components, because = vllm.stock["cuda"]
    assert components == ("cuda_runtime=13.0", "flashinfer=0.7.2")
    assert because.startswith("vllm==0.33.0 from PyPI requires flashinfer-python")
    b200 = attnsel.Platform.cuda(10, 0)
    stocked = vllm.with_stock(b200)
    assert stocked.has_component("flashinfer") and not b200.has_component("flashinfer")
    assert attnsel.select(vllm, attnsel.Query(), stocked).backend == "FLASHINFER"
    assert attnsel.select(vllm, attnsel.Query(), b200).backend == "FLASH_ATTN"  # select never adds it
    # a component the platform has keeps its version; another vendor, or a catalog stating none, adds nothing
    own = attnsel.Platform.cuda(10, 0, components=["cuda_runtime=12.8"])
    assert vllm.with_stock(own).components["cuda_runtime"] == "12.8"
    assert vllm.with_stock(attnsel.Platform.xpu()) == attnsel.Platform.xpu()
    # vLLM's ROCm image: AITER installed (not switched on) and flash-attention
    assert vllm.stock["rocm"][0] == ("aiter", "flash_attn")
    assert vllm.with_stock(attnsel.Platform.rocm("gfx942")) == attnsel.Platform.rocm(
        "gfx942", components=["aiter", "flash_attn"])
    assert attnsel.builtin_catalog("vllm@main-2026-12").stock == {}
    # and the catalog text carries it
    assert json.loads(attnsel.to_json(vllm))["stock"]["cuda"]["components"] == list(components)
    with pytest.raises(TypeError):
        vllm.with_stock("cuda")
