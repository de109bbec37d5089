# SPDX-License-Identifier: Apache-2.0
# docs/catalog.schema.json and the C++ loader judge one corpus of good and bad catalogs the same way.
"""Every catalog the schema accepts loads, and every catalog the schema refuses is refused by the loader
at the same place. The loader checks more than JSON Schema can say (references between backends and
rules, empty ranges, duplicate names and keys, counts against catalog_limits); those catalogs are in
LOADER_ONLY with the loader's reason, and the schema must accept them, so the list is exactly the checks
beyond the schema (docs/catalog-format.md, "What the schema cannot check")."""
import copy
import glob
import json
import os
import pathlib

import pytest

jsonschema = pytest.importorskip("jsonschema")  # an optional module: without it the suite skips, not fails

import attnsel

ROOT = pathlib.Path(os.environ.get("ATTNSEL_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCHEMA = json.loads((ROOT / "docs" / "catalog.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

BASE = {
    "format": "attnsel-catalog",
    "version": 1,
    "name": "schema_corpus",
    "backends": [
        {
            "name": "FAST",
            "aliases": ["FAST_ALIAS"],
            "domains": ["decoder"],
            "platforms": [{"vendor": "cuda", "min_capability": "9.0"}, {"vendor": "rocm", "families": ["gfx9"]}],
            "features": ["sinks"],
            "variants": [{"name": "V1", "head_sizes": {"min": 8, "max": 256}}],
        },
        {"name": "SLOW", "domains": ["decoder", "encoder"], "platforms": "any", "requires": [{"component": "aiter"}]},
    ],
    "policies": [
        {"domain": "decoder", "vendor": "cuda", "min_capability": "8.0", "order": ["FAST", {"backend": "SLOW"}]},
        {"domain": "decoder", "vendor": "rocm", "archs": ["gfx942"], "order": [{"backend": "FAST", "when": ["aiter"]}]},
    ],
    "implications": {"aiter_mha": ["aiter"]},
}


DELETE = object()


def mutate(path, value):
    """BASE with the value at `path` (a list of keys/indices) replaced; value DELETE removes the key."""
    doc = copy.deepcopy(BASE)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc

# (name, document, pointer prefix the loader's error must start with) for catalogs both must refuse.
BAD = [
    ("lower-case policy entry", mutate(["policies", 0, "order", 0], "fast"), "/policies/0/order/0"),
    ("lower-case entry object", mutate(["policies", 0, "order", 1], {"backend": "slow"}), "/policies/0/order/1"),
    ("capability on rocm", mutate(["backends", 0, "platforms", 1, "min_capability"], "9.0"), "/backends/0/platforms/1"),
    ("archs on cuda", mutate(["backends", 0, "platforms", 0, "archs"], ["gfx942"]), "/backends/0/platforms/0"),
    ("families on cpu", mutate(["backends", 0, "platforms", 0], {"vendor": "cpu", "families": ["gfx9"]}),
     "/backends/0/platforms/0"),
    ("capability on a rocm rule", mutate(["policies", 1, "max_capability"], "9.0"), "/policies/1"),
    ("archs on a cuda rule", mutate(["policies", 0, "archs"], ["gfx942"]), "/policies/0"),
    ("sm_90 as a capability", mutate(["backends", 0, "platforms", 0, "min_capability"], "sm_90"),
     "/backends/0/platforms/0/min_capability"),
    ("rule arch not a gfx target", mutate(["policies", 1, "archs"], ["mi300x"]), "/policies/1/archs"),
    ("unknown key in a platform", mutate(["backends", 0, "platforms", 0, "arch"], "9.0"), "/backends/0/platforms/0"),
    ("unknown key in a backend", mutate(["backends", 1, "priority"], 3), "/backends/1"),
    ("unknown key in a rule", mutate(["policies", 0, "priority"], 1), "/policies/0"),
    ("unknown key in an entry", mutate(["policies", 0, "order", 1, "if"], ["x"]), "/policies/0/order/1"),
    ("unknown key in a requirement", mutate(["backends", 1, "requires", 0, "version"], "1.0"),
     "/backends/1/requires/0"),
    ("upper-case feature", mutate(["backends", 0, "features"], ["Sinks"]), "/backends/0/features"),
    ("domain spelt in capitals", mutate(["backends", 0, "domains"], ["Decoder"]), "/backends/0/domains"),
    ("unknown dtype", mutate(["backends", 1, "dtypes"], ["float8"]), "/backends/1/dtypes"),
    ("head size zero", mutate(["backends", 1, "head_sizes"], [0, 64]), "/backends/1/head_sizes"),
    ("head size above the limit", mutate(["backends", 1, "head_sizes"], {"max": 70000}), "/backends/1/head_sizes"),
    ("version as a string", mutate(["version"], "1"), "/version"),
    ("wrong format", mutate(["format"], "attnsel-catalogue"), "/format"),
    ("no backends", mutate(["backends"], DELETE), ""),
    ("empty order", mutate(["policies", 0, "order"], []), "/policies/0/order"),
    ("zero max_num_heads", mutate(["policies", 0, "max_num_heads"], 0), "/policies/0/max_num_heads"),
    ("upper-case implication", mutate(["implications"], {"AITER_MHA": ["aiter"]}), "/implications"),
    ("backend name with a dash", mutate(["backends", 1, "name"], "SLOW-2"), "/backends/1/name"),
    ("bad min_version", mutate(["backends", 1, "requires", 0, "min_version"], "v1"), "/backends/1/requires/0"),
    ("stock on no vendor", dict(mutate(["stock"], {"gpu": {"components": ["flashinfer"], "because": "x"}}), version=2),
     "/stock/gpu"),
    ("stock without a reason", dict(mutate(["stock"], {"cuda": {"components": ["flashinfer"]}}), version=2),
     "/stock/cuda"),
]

# Refused by the loader only: what JSON Schema cannot express. (name, document, start of the loader's message).
LOADER_ONLY = [
    ("unknown backend in an order", mutate(["policies", 0, "order", 0], "MISSING"), "unknown backend"),
    ("a backend twice in one rule", mutate(["policies", 0, "order"], ["FAST", "FAST_ALIAS"]), "policy rule 0"),
    ("two backends with one name", mutate(["backends", 1, "name"], "FAST"), "duplicate backend name FAST"),
    ("alias equal to another name", mutate(["backends", 1, "aliases"], ["FAST"]), "name FAST is used by"),
    ("empty head-size range", mutate(["backends", 0, "variants", 0, "head_sizes"], {"min": 256, "max": 8}),
     "head-size range is empty"),
    ("inverted capability range", mutate(["backends", 0, "platforms", 0, "max_capability"], "8.0"),
     "capability range is inverted"),
    ("stock in a version-1 document", mutate(["stock"], {"cuda": {"components": ["flashinfer"], "because": "x"}}),
     "this key needs catalog version 2"),
    ("a stock component twice", dict(mutate(["stock"], {"cuda": {"components": ["flashinfer", "flashinfer=0.7"],
                                                                 "because": "x"}}), version=2),
     "names a component twice"),
]


def loader_verdict_text(text):
    """The loader's CatalogError for `text`, or None when it loads."""
    try:
        attnsel.parse_catalog(text)
        return None
    except attnsel.CatalogError as e:
        return e


def loader_verdict(doc):
    return loader_verdict_text(json.dumps(doc))


def schema_errors(doc):
    return [e.message for e in VALIDATOR.iter_errors(doc)]


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_base_document_is_good_for_both():
    assert schema_errors(BASE) == []
    assert loader_verdict(BASE) is None


def good_corpus():
    files = sorted(glob.glob(str(ROOT / "catalog" / "*.json"))) + sorted(glob.glob(str(ROOT / "tests/data/lint/*.json")))
    files += sorted(glob.glob(str(ROOT / "fuzz/corpus/fuzz_catalog/*.json")))
    return [f for f in files if not f.endswith("engine_switches.json")]


@pytest.mark.parametrize("path", good_corpus(), ids=lambda p: os.path.relpath(p, ROOT))
def test_files_get_one_verdict_from_both(path):
    text = pathlib.Path(path).read_text()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        assert loader_verdict_text(text) is not None
        return
    errors = schema_errors(doc)
    refused = loader_verdict(doc)
    if errors:
        assert refused is not None, f"the schema refuses ({errors[0]}) but the loader accepts"
    elif refused is not None:
        # Accepted by the schema, refused by the loader: only for a reason the schema cannot express.
        reasons = [why for _, _, why in LOADER_ONLY] + ["is used by both"]
        assert any(r in refused.problem or r in str(refused) for r in reasons), str(refused)


@pytest.mark.parametrize("name,doc,pointer", BAD, ids=[b[0] for b in BAD])
def test_bad_catalogs_are_refused_by_both_at_the_same_place(name, doc, pointer):
    assert schema_errors(doc), f"the schema accepts: {name}"
    refused = loader_verdict(doc)
    assert refused is not None, f"the loader accepts: {name}"
    assert refused.pointer.startswith(pointer), (refused.pointer, str(refused))


@pytest.mark.parametrize("name,doc,why", LOADER_ONLY, ids=[b[0] for b in LOADER_ONLY])
def test_what_the_schema_cannot_say_is_the_loaders_alone(name, doc, why):
    assert schema_errors(doc) == [], f"the schema now refuses {name}: move it to BAD"
    refused = loader_verdict(doc)
    assert refused is not None and why in str(refused), str(refused)
