# SPDX-License-Identifier: Apache-2.0
# atheris target: `python -m attnsel.tune --from-json` input (a measurements file) through the reader and the overlay.
"""Fuzzes what `python -m attnsel.tune --from-json FILE` does with FILE before writing anything.

Input: the file's bytes. The invariants (docs/fuzzing.md, docs/tuning.md "What tune refuses"):

- reading (tune.read_measurements: UTF-8 text, JSON, tune.from_json) raises only ValueError (the
  documented MeasurementError, a UnicodeDecodeError or a JSON error), never RecursionError, KeyError,
  TypeError ...: tune's main turns a ValueError into one line and exit status 1, anything else is a
  traceback;
- what reads round-trips: from_json(to_json(results)) == results, and to_json is stable;
- the overlay, its text, its merge onto torch_sdpa, the regret rows and the report raise only ValueError
  (attnsel.CatalogError is one) as main expects.

Run by tools/run_fuzzers.sh (target py_tune_measurements) in the venv tools/fuzz_python_env.sh makes,
with PYTHONPATH naming a built attnsel package. libFuzzer flags pass through (-runs=, -max_total_time=, ...).
"""

import json
import random
import sys
import warnings

import atheris

with atheris.instrument_imports(include=["attnsel"]):
    import attnsel
    from attnsel import tune
    from attnsel.tune.cli import _json_text  # what main writes the overlay and the JSON report with


class InvariantViolated(AssertionError):
    pass


def violated(what: str, data: bytes, detail: object = "") -> None:
    raise InvariantViolated(f"py_tune_measurements: invariant violated: {what}\n  input: {data[:300]!r}\n  {detail}")


def test_one_input(data: bytes) -> None:
    try:
        results = tune.read_measurements(data)
    except ValueError:
        return  # refused, as documented (main: one line, exit 1)
    if not results:
        return  # main: "no workloads were measured", exit 1
    doc = tune.to_json(results)
    again = tune.from_json(json.loads(json.dumps(doc)))
    if again != results:
        violated("from_json(to_json(results)) == results", data)
    if tune.to_json(again) != doc:
        violated("to_json is stable", data)
    platform = results[0].platform
    try:
        text = _json_text(tune.overlay(results, command="fuzz"))
        merged = attnsel.torch_sdpa_registry()
        merged.merge(attnsel.parse_catalog(text, "overlay.json"))
        rows = tune.regret_rows(results, tune.tuned_choice(merged, platform))
        tune.report(results, rows, "fuzz")
        _json_text({**doc, "rows": rows})
    except ValueError:
        pass  # main: one line, exit 1 (attnsel.CatalogError is a ValueError)


# Structure-aware mutation: an input that is JSON has one value replaced (by a value of another type, an
# edge of a bound, a deep nest), one key dropped or one value copied elsewhere, and is written back;
# other inputs (and one mutation in four) get libFuzzer's byte mutations.
ODD_VALUES = (None, True, False, 0, -1, 1, 2, 0.5, 1e308, 5e-324, float("nan"), float("inf"), -float("inf"),
              1 << 30, (1 << 30) + 1, 1 << 24, (1 << 24) + 1, 1 << 64, "", "x", "bfloat16", "MATH", "FLASH_ATTENTION",
              "decode", "9.0", [], {}, [1], [2, 1], [1, 2, 3], ["bfloat16"], {"a": 1}, [[[[[]]]]])


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        doc = None
    if doc is None or rng.random() < 0.25:
        return atheris.Mutate(data, max_size)
    paths = list(_paths(doc))
    path = rng.choice(paths)
    choice = rng.random()
    if not path:
        doc = rng.choice(ODD_VALUES) if choice < 0.1 else doc
    else:
        parent, key = _get(doc, path[:-1]), path[-1]
        if choice < 0.6:
            parent[key] = rng.choice(ODD_VALUES)
        elif choice < 0.75 and isinstance(parent, dict):
            del parent[key]
        elif choice < 0.9:
            parent[key] = json.loads(json.dumps(_get(doc, rng.choice(paths))))  # a copy of another value
        elif isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            parent[key] = parent[key] + rng.choice((-1, 1))
    out = json.dumps(doc).encode()
    return out if len(out) <= max_size else atheris.Mutate(data, max_size)


def main() -> None:
    warnings.simplefilter("error")  # a warning on this path is unexpected: make it a finding
    atheris.Setup(sys.argv, test_one_input, custom_mutator=mutate)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
