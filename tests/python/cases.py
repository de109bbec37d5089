# SPDX-License-Identifier: Apache-2.0
# Reads tests/data/*_cases.json and runs one case the way tests/test_reference_cases.cpp does.
import json
import pathlib
from typing import Dict, List

import attnsel

_REGISTRIES: Dict[str, attnsel.Registry] = {}


def load_cases(source_dir: pathlib.Path, file: str) -> List[dict]:
    return json.loads((source_dir / "tests" / "data" / file).read_text())["cases"]


def catalog_registry(name: str) -> attnsel.Registry:
    if name not in _REGISTRIES:
        _REGISTRIES[name] = attnsel.builtin_catalog(name)
    return _REGISTRIES[name]


def run_case(case: dict) -> None:
    """Asserts what the case expects: the backend or the error code, then each listed candidate's
    reason codes exactly (as a set), exactly as the C++ table test does."""
    reg = catalog_registry(case["catalog"])
    platform = attnsel.Platform.from_json(json.dumps(case["platform"]))
    query = attnsel.Query.from_json(json.dumps(case.get("query", {})))
    ex = attnsel.explain(reg, query, platform, case.get("override", ""))
    expect = case["expect"]
    if "backend" in expect:
        assert ex.ok, ex.result.message
        assert ex.result.backend == expect["backend"]
        # select() agrees with explain() on the winner.
        assert attnsel.select(reg, query, platform, case.get("override", "")).backend == expect["backend"]
    else:
        assert not ex.ok
        assert ex.result.code == expect["error"]
    candidates = ex.candidates if ex.ok else ex.result.candidates
    by_name = {c.name: c for c in candidates}
    for name, codes in expect.get("reasons", {}).items():
        assert name in by_name, f"candidate {name} missing"
        assert {r.code for r in by_name[name].reasons} == set(codes), f"candidate {name}"
