# SPDX-License-Identifier: Apache-2.0
"""The calls an engine makes per layer (Query(...), select, Selector.select) skip pybind11's dispatcher:
they take the same arguments, refuse the same mistakes, and return equal answers; equal answers from
one registry are one Selection object."""
import inspect
import json
import pickle

import pytest

import attnsel

HOPPER = attnsel.Platform.cuda(9, 0)


def fresh_query():
    return attnsel.Query(head_size=64, dtype="bfloat16", num_heads=16, num_kv_heads=4, features={"sinks"})


def test_query_keywords_in_any_order_build_the_same_value():
    a = attnsel.Query(head_size=64, dtype="bfloat16", num_heads=16, num_kv_heads=4, features={"sinks"})
    b = attnsel.Query(features=["sinks"], num_kv_heads=4, num_heads=16, dtype="bf16", head_size=64)
    c = attnsel.Query(**{"head_size": 64, "dtype": "bfloat16", "num_heads": 16, "num_kv_heads": 4,
                         "features": ("sinks",)})
    assert a == b == c and hash(a) == hash(b) == hash(c)
    assert a.head_size == 64 and a.dtype == "bfloat16" and a.features == frozenset({"sinks"})
    assert attnsel.Query() == attnsel.Query(head_size=128)


def test_query_refuses_what_it_refused_before():
    with pytest.raises(TypeError, match=r"Query\(\) takes keyword arguments only \(1 positional given\)"):
        attnsel.Query(64)
    with pytest.raises(TypeError, match="unexpected keyword argument 'head_sz'; did you mean 'head_size'"):
        attnsel.Query(head_sz=64)
    # The first bad field in the table's order is named, whatever order the call wrote them in.
    with pytest.raises(ValueError, match="head_size: 0 is outside"):
        attnsel.Query(dtype="fp99", head_size=0)
    with pytest.raises(TypeError, match="features: expected a collection of str, got a str"):
        attnsel.Query(features="sinks")
    with pytest.raises(TypeError, match="features: every entry must be a str, got int"):
        attnsel.Query(features={1})
    with pytest.raises(TypeError, match="features: expected a collection of str, got int"):
        attnsel.Query(features=3)
    with pytest.raises(ValueError, match="features: more than"):
        attnsel.Query(features=[f"f{i}" for i in range(100000)])
    with pytest.raises(ValueError, match="features: more than"):
        attnsel.Query(features=(f"f{i}" for i in range(100000)))  # no length: counted while read
    with pytest.raises(ZeroDivisionError):
        attnsel.Query(features=(1 // 0 for _ in range(1)))  # the iterator's own error propagates


def test_query_subclass_and_replace_take_the_ordinary_path():
    class Layer(attnsel.Query):
        pass

    q = Layer(head_size=64, features={"sinks"})
    assert isinstance(q, Layer) and q == attnsel.Query(head_size=64, features={"sinks"})
    with pytest.raises(TypeError, match="keyword arguments only"):
        Layer(64)
    assert fresh_query().replace(head_size=128).head_size == 128
    with pytest.raises(TypeError, match="did you mean 'head_size'"):
        fresh_query().replace(head_sise=1)
    assert pickle.loads(pickle.dumps(fresh_query())) == fresh_query()


def test_selector_select_takes_the_query_by_position_or_keyword_and_raise_on_error_by_keyword():
    reg = attnsel.reference_registry()
    s = attnsel.Selector(reg, HOPPER)
    want = attnsel.select(reg, fresh_query(), HOPPER)
    assert s.select(fresh_query()) == want
    assert s.select(query=fresh_query()) == want
    assert s.select(fresh_query(), raise_on_error=False) == want
    with pytest.raises(TypeError, match=r"select\(\) takes at most 1 positional argument \(2 given\)"):
        s.select(fresh_query(), False)
    with pytest.raises(TypeError, match="missing required argument 'query'"):
        s.select()
    with pytest.raises(TypeError, match="unexpected keyword argument 'qeury'; did you mean 'query'"):
        s.select(qeury=fresh_query())
    with pytest.raises(TypeError, match="multiple values for argument 'query'"):
        s.select(fresh_query(), query=fresh_query())
    with pytest.raises(TypeError, match="query: expected an attnsel.Query, got str"):
        s.select("FLASH_ATTN")
    with pytest.raises(TypeError):
        attnsel.Selector.select(object(), fresh_query())  # not a Selector: the descriptor refuses it
    failing = attnsel.Query(features={"no_backend_has_this"})
    with pytest.raises(attnsel.SelectionError):
        s.select(failing)
    assert isinstance(s.select(failing, raise_on_error=False), attnsel.SelectionError)
    assert str(inspect.signature(attnsel.Selector.select)) == "(self, /, query, *, raise_on_error=True)"
    assert str(inspect.signature(attnsel.select)) == (
        "(registry, query, platform, override=None, *, prefer=False, raise_on_error=True, refuse_advisories=False)")


def test_equal_answers_from_one_registry_are_one_selection_object():
    reg = attnsel.reference_registry()
    s = attnsel.Selector(reg, HOPPER)
    first = attnsel.select(reg, fresh_query(), HOPPER)
    again = attnsel.select(reg, fresh_query(), HOPPER)
    assert again is first
    assert s.select(fresh_query()) is s.select(fresh_query())
    # A different answer is a different object, and overrides, ranks and sources are kept apart.
    forced = attnsel.select(reg, fresh_query(), HOPPER, "TRITON_ATTN")
    assert forced.backend == "TRITON_ATTN" and forced.overridden and forced is not first
    assert attnsel.select(reg, fresh_query(), HOPPER, "TRITON_ATTN") is forced
    stated = attnsel.select(reg, fresh_query(), HOPPER, "auto")  # the same backend, from an override
    assert stated.backend == first.backend and stated.source == "api" and stated is not first
    # Another registry of the same catalog keeps its own objects.
    other = attnsel.reference_registry()
    assert attnsel.select(other, fresh_query(), HOPPER) == first
    # Prefer-mode fallbacks carry their reasons: never shared.
    a = attnsel.select(reg, fresh_query(), HOPPER, "TORCH_SDPA", prefer=True)
    b = attnsel.select(reg, fresh_query(), HOPPER, "TORCH_SDPA", prefer=True)
    assert a.fell_back and a == b and a is not b


def test_a_merge_forgets_the_selections_of_the_registry_it_replaced():
    reg = attnsel.reference_registry()
    before = attnsel.select(reg, fresh_query(), HOPPER)
    overlay = attnsel.parse_catalog(json.dumps({
        "format": "attnsel-catalog", "version": 1, "name": "mine",
        "backends": [{"name": "MY_KERNEL", "domains": ["decoder"], "features": ["sinks"]}],
        "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["MY_KERNEL"]}]}))
    reg.merge(overlay)
    after = attnsel.select(reg, fresh_query(), HOPPER)
    assert after.backend == "MY_KERNEL" and before.backend != "MY_KERNEL"
    assert attnsel.select(reg, fresh_query(), HOPPER) is after


def test_equal_queries_built_afresh_hit_the_selector_cache():
    s = attnsel.Selector(attnsel.reference_registry(), HOPPER)
    answers = {s.select(fresh_query()) for _ in range(1000)}
    assert len(answers) == 1
    assert s.stats == {"hits": 999, "misses": 1}
    # A different query is a miss, and its own answer.
    s.select(fresh_query().replace(head_size=128))
    assert s.stats["misses"] == 2
