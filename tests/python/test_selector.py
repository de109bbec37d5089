# SPDX-License-Identifier: Apache-2.0
"""attnsel.Selector: the bound selector answers exactly as attnsel.select, cached or not."""
import itertools
import json
import pickle
import random
import threading

import pytest

import attnsel
from cases import catalog_registry, load_cases


def outcome(r):
    """What a caller can read of a select() result: the Selection's fields, or the error's code and text."""
    if isinstance(r, attnsel.Selection):
        return ("ok", r.backend, r.variant, r.rank, r.overridden, r.source, r.fell_back)
    return ("error", r.code, r.message)


def free(reg, q, p, override=None, prefer=False):
    return attnsel.select(reg, q, p, override, prefer=prefer, raise_on_error=False)


@pytest.mark.parametrize("file", ["vllm_cases.json", "torch_sdpa_cases.json"])
def test_every_table_case_answers_as_the_free_select_on_a_miss_and_on_a_hit(source_dir, file):
    cases = load_cases(source_dir, file)
    assert cases
    for case in cases:
        reg = catalog_registry(case["catalog"])
        p = attnsel.Platform.from_json(json.dumps(case["platform"]))
        q = attnsel.Query.from_json(json.dumps(case.get("query", {})))
        override = case.get("override", "")
        s = attnsel.Selector(reg, p, override)
        want = outcome(free(reg, q, p, override))
        assert outcome(s.select(q, raise_on_error=False)) == want, case
        assert outcome(s.select(q, raise_on_error=False)) == want, case  # the cached answer
        assert s.explain(q) == attnsel.explain(reg, q, p, override)


def test_random_calls_with_new_lengths_hit_the_cache_and_never_differ():
    reg = attnsel.torch_sdpa_registry()
    p = attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred"])
    s = attnsel.Selector(reg, p)
    rng = random.Random(19)
    for _ in range(3000):
        q = attnsel.Query(head_size=rng.choice([32, 64, 80, 128, 256, 100]),
                          dtype=rng.choice(["float16", "bfloat16", "float32"]),
                          attn_type=rng.choice(["decoder", "encoder_only"]),
                          seq_len_q=rng.choice([None, 1, rng.randint(2, 8192)]),
                          seq_len_kv=rng.choice([None, 1, rng.randint(2, 65536)]),
                          batch_size=rng.choice([None, 1, rng.randint(2, 64)]))
        assert outcome(s.select(q, raise_on_error=False)) == outcome(free(reg, q, p))
    st = s.stats
    assert st["hits"] + st["misses"] == 3000
    assert st["hits"] > st["misses"]  # lengths fall into the catalog's few classes


def test_overrides_phases_and_prefer_as_the_free_select():
    reg = attnsel.reference_registry()
    p = attnsel.Platform.cuda(9, 0, components=["flashinfer"])
    overrides = [None, "", "TRITON_ATTN", "FLASHINFER", "NO_SUCH_BACKEND",
                 attnsel.OverrideSet(decoder="TRITON_ATTN", decode="FLASHINFER"),
                 attnsel.OverrideSet(encoder="TORCH_SDPA", source="env")]
    queries = [attnsel.Query(phase=phase, domain=domain, head_size=hs)
               for phase, domain, hs in itertools.product([None, "prefill", "decode"], ["decoder", "encoder"],
                                                          [64, 72])]
    for override, prefer in itertools.product(overrides, [False, True]):
        s = attnsel.Selector(reg, p, override, prefer=prefer)
        for q in queries:
            want = outcome(free(reg, q, p, override, prefer))
            assert outcome(s.select(q, raise_on_error=False)) == want, (override, prefer, q)
            assert s.explain(q) == attnsel.explain(reg, q, p, override, prefer=prefer)


def test_failure_raises_unless_asked_to_return_it():
    reg = attnsel.reference_registry()
    s = attnsel.Selector(reg, attnsel.Platform.cuda(9, 0), "NO_SUCH_BACKEND")
    with pytest.raises(attnsel.SelectionError) as err:
        s.select(attnsel.Query())
    assert err.value.code == "unknown_backend"
    returned = s.select(attnsel.Query(), raise_on_error=False)
    assert isinstance(returned, attnsel.SelectionError) and returned.code == "unknown_backend"


def test_cache_counts_hits_and_misses_and_clears():
    reg = attnsel.reference_registry()
    p = attnsel.Platform.cuda(9, 0)
    s = attnsel.Selector(reg, p)
    assert s.cache_enabled and s.stats == {"hits": 0, "misses": 0}
    q = attnsel.Query(head_size=128)
    first = s.select(q)
    assert s.stats == {"hits": 0, "misses": 1}
    assert s.select(q) == first and s.stats == {"hits": 1, "misses": 1}
    s.clear_cache()  # forgets the decisions and their counts
    assert s.stats == {"hits": 0, "misses": 0}
    assert s.select(q) == first and s.stats == {"hits": 0, "misses": 1}
    off = attnsel.Selector(reg, p, cache=False, cache_slots=1)
    assert not off.cache_enabled
    assert off.select(q) == first and off.select(q) == first
    assert off.stats == {"hits": 0, "misses": 0}


def test_fresh_equal_queries_hit_whoever_built_them():
    """A new Query per call (equal values, new feature lists) is one cache entry: the key holds the
    features by value."""
    reg = attnsel.reference_registry()
    s = attnsel.Selector(reg, attnsel.Platform.rocm("gfx942"))
    answers = {s.select(attnsel.Query(head_size=64, features={"sinks"})).backend for _ in range(2000)}
    assert answers == {attnsel.select(reg, attnsel.Query(head_size=64, features={"sinks"}),
                                      attnsel.Platform.rocm("gfx942")).backend}
    assert s.stats == {"hits": 1999, "misses": 1}


def test_a_merge_after_binding_leaves_the_selector_on_its_snapshot():
    reg = attnsel.parse_catalog(json.dumps({
        "format": "attnsel-catalog", "version": 1, "name": "one",
        "backends": [{"name": "A", "domains": ["decoder"]}],
        "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["A"]}]}))
    p = attnsel.Platform.cuda(9, 0)
    s = attnsel.Selector(reg, p)
    reg.merge(attnsel.parse_catalog(json.dumps({
        "format": "attnsel-catalog", "version": 1, "name": "two",
        "backends": [{"name": "B", "domains": ["decoder"]}],
        "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["B"]}]})))
    assert attnsel.select(reg, attnsel.Query(), p).backend == "B"
    assert s.select(attnsel.Query()).backend == "A"
    assert "catalog='one'" in repr(s)


def test_bad_arguments_are_named():
    reg = attnsel.reference_registry()
    p = attnsel.Platform.cuda(9, 0)
    with pytest.raises(TypeError, match="registry: expected an attnsel.Registry, got str"):
        attnsel.Selector("vllm", p)
    with pytest.raises(TypeError, match="platform: expected an attnsel.Platform"):
        attnsel.Selector(reg, "cuda")
    with pytest.raises(TypeError, match="override: expected None, a str or an attnsel.OverrideSet, got int"):
        attnsel.Selector(reg, p, 5)
    with pytest.raises(ValueError, match="cache_slots: 0 is outside 1..65536"):
        attnsel.Selector(reg, p, cache_slots=0)
    with pytest.raises(TypeError, match="cache_slots"):
        attnsel.Selector(reg, p, cache_slots=True)
    s = attnsel.Selector(reg, p)
    with pytest.raises(TypeError, match="query: expected an attnsel.Query, got dict"):
        s.select({"head_size": 64})
    with pytest.raises(TypeError, match="query: expected an attnsel.Query"):
        s.explain(None)


def test_objects_made_without_their_constructor_are_refused_not_crashed():
    blank = attnsel.Selector.__new__(attnsel.Selector)
    for call in (lambda: blank.select(attnsel.Query()), lambda: blank.explain(attnsel.Query()),
                 lambda: blank.stats, lambda: blank.clear_cache(), lambda: repr(blank)):
        with pytest.raises(TypeError, match="never initialised"):
            call()
    s = attnsel.Selector(attnsel.reference_registry(), attnsel.Platform.cuda(9, 0))
    with pytest.raises(TypeError, match="never initialised"):
        s.select(attnsel.Query.__new__(attnsel.Query))
    with pytest.raises(TypeError):
        pickle.dumps(s)  # a selector is bound state, not a value


def test_threads_share_one_selector_while_another_clears_its_cache():
    reg = attnsel.reference_registry()
    p = attnsel.Platform.rocm("gfx942", components=["aiter", "aiter_enabled", "aiter_mha"])
    s = attnsel.Selector(reg, p)
    queries = [attnsel.Query(head_size=hs, dtype=dt, features=f)
               for hs in (64, 128, 256) for dt in ("float16", "bfloat16") for f in ([], ["sinks"])]
    want = [outcome(free(reg, q, p)) for q in queries]
    errors = []
    stop = threading.Event()

    def worker():
        for _ in range(200):
            for q, w in zip(queries, want):
                got = outcome(s.select(q, raise_on_error=False))
                if got != w:
                    errors.append((q, got, w))

    def clearer():
        while not stop.is_set():
            s.clear_cache()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    c = threading.Thread(target=clearer)
    c.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    c.join()
    assert errors == []
