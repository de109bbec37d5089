# SPDX-License-Identifier: Apache-2.0
"""Advisories from Python: Selection.advisory, refuse_advisories on select / explain / Selector, pickling."""
import json
import pickle

import pytest

import attnsel

URL = "https://example.org/issues/7"


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    doc = {
        "format": "attnsel-catalog", "version": 2, "name": "advised",
        "backends": [
            {"name": "FAST", "domains": ["decoder"], "dtypes": ["float16", "bfloat16"], "head_sizes": [128],
             "kv_cache_dtypes": ["auto", "fp8"], "platforms": [{"vendor": "cuda"}],
             "advisories": [{"id": "fast-fp8", "kv_cache_dtypes": ["fp8"], "action": "warn",
                             "message": "fp8 is slow here", "upstream": [URL]}]},
            {"name": "SLOW", "domains": ["decoder"], "dtypes": ["float16", "bfloat16"], "head_sizes": [128],
             "kv_cache_dtypes": ["auto", "fp8"], "platforms": [{"vendor": "cuda"}]},
        ],
        "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["FAST", "SLOW"]}],
    }
    path = tmp_path_factory.mktemp("advised") / "advised.json"
    path.write_text(json.dumps(doc))
    return attnsel.load_catalog(path)


def test_a_warning_advisory_rides_on_the_selection(advised):
    p = attnsel.Platform.cuda(9, 0)
    q = attnsel.Query(head_size=128, kv_cache_dtype="fp8")
    s = attnsel.select(advised, q, p)
    assert s.backend == "FAST"
    assert s.advisory == {"id": "fast-fp8", "action": "warn", "message": "fp8 is slow here", "upstream": [URL]}
    assert attnsel.select(advised, attnsel.Query(head_size=128), p).advisory is None
    assert attnsel.Selector(advised, p).select(q) == s
    assert attnsel.Selector(advised, p).select(q).advisory == s.advisory

    back = pickle.loads(pickle.dumps(s))
    assert back == s and back.advisory == s.advisory

    ex = attnsel.explain(advised, q, p)
    report = json.loads(attnsel.to_json(ex))
    assert report["advisory"]["id"] == "fast-fp8"
    assert [w["code"] for w in report["candidates"][0]["warnings"]] == ["advisory"]
    fast, slow = ex.candidates[0], next(c for c in ex.candidates if c.name == "SLOW")
    assert [(w.code, "fast-fp8" in w.message) for w in fast.warnings] == [("advisory", True)]
    assert fast.reasons == [] and slow.warnings == []
    assert "warnings=[attnsel.Reason(code='advisory'" in repr(fast) and "warnings" not in repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == fast and pickle.loads(pickle.dumps(fast)).warnings == fast.warnings
    assert attnsel.Candidate(name="FAST", warnings=fast.warnings) != attnsel.Candidate(name="FAST")
    with pytest.raises(TypeError, match="warnings: expected a list of attnsel.Reason, got str"):
        attnsel.Candidate(name="FAST", warnings="advisory")


def test_refuse_advisories_refuses_the_warned_backend(advised):
    p = attnsel.Platform.cuda(9, 0)
    q = attnsel.Query(head_size=128, kv_cache_dtype="fp8")
    s = attnsel.select(advised, q, p, refuse_advisories=True)
    assert (s.backend, s.advisory) == ("SLOW", None)
    assert attnsel.Selector(advised, p, refuse_advisories=True).select(q).backend == "SLOW"
    assert "refuse_advisories=True" in repr(attnsel.Selector(advised, p, refuse_advisories=True))

    err = attnsel.select(advised, q, p, "FAST", refuse_advisories=True, raise_on_error=False)
    assert isinstance(err, attnsel.SelectionError) and err.code == "backend_rejected"
    assert "advisory fast-fp8: fp8 is slow here" in str(err)

    ex = attnsel.explain(advised, q, p, refuse_advisories=True)
    fast = next(c for c in ex.candidates if c.name == "FAST")
    assert fast.verdict == "rejected" and [r.code for r in fast.reasons] == ["advisory"]
    again = pickle.loads(pickle.dumps(ex))
    assert again == ex and again.result.backend == "SLOW"


def test_the_vllm_release_catalog_demotes_fa4_under_batch_invariance():
    reg = attnsel.builtin_catalog("vllm@0.33.0")
    b200 = attnsel.Platform.cuda(10, 0)
    q = attnsel.Query(features=["batch_invariant", "sinks"])
    assert attnsel.select(reg, q, b200).backend != "FLASH_ATTN"
    err = attnsel.select(reg, q, b200, "FLASH_ATTN", raise_on_error=False)
    assert err.code == "backend_rejected"
    assert "vllm-fa4-batch-invariant-sinks" in str(err)
    assert "https://github.com/vllm-project/vllm/pull/36059" in str(err)
