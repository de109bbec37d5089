# SPDX-License-Identifier: Apache-2.0
"""attnsel side of the differential oracle: asks attnsel every question an engine answered, and
writes report.json / report.md (docs/oracle.md). Needs `import attnsel` (PYTHONPATH=build/dev/python).

Every disagreement is either matched by an entry of the known-differences file (a cause that
docs/catalog-sources.md names) or it is *unexplained*: then the exit status is 1, unless the group is
listed in the open-differences file (tests/data/oracle/open_differences.json: groups seen but not yet
diagnosed, each with the most cases it may have). An open group is reported as open, never as agreed,
and a group that grows past its count, or a new one, fails.
Exit 2: bad input to the oracle itself (a file, a catalog that does not load)."""
import argparse
import collections
import json
import os
import sys
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import OracleError, load_json  # noqa: E402

# engine -> the module that asks attnsel that engine's questions (ask_<engine>.py beside this file)
ASKERS = ("vllm", "sglang")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "oracle")
DEFAULT_KNOWN = os.path.join(DATA, "known_differences.json")
DEFAULT_OPEN = os.path.join(DATA, "open_differences.json")


def kind(engine: Dict[str, Any], mine: Dict[str, Any]) -> Optional[str]:
    """How two answers differ; None when they agree (the same backend, or both refuse)."""
    if "backend" in engine and "backend" in mine:
        return None if engine["backend"] == mine["backend"] else "different backend"
    if "backend" in engine:
        return "attnsel refuses, engine selects"
    if "backend" in mine:
        return "engine refuses, attnsel selects"
    return None


# ------------------------------------------------------------------------------ known differences
KNOWN_KEYS = {"id", "engine", "match", "cause", "doc", "test"}


def load_known(path: str) -> List[Dict[str, Any]]:
    doc = load_json(path, "known differences")
    if not isinstance(doc, dict) or not isinstance(doc.get("differences"), list):
        raise OracleError(f"known differences {path}: expected an object with a list 'differences'")
    out = []
    for i, d in enumerate(doc["differences"]):
        where = f"known differences {path}/differences/{i}"
        if not isinstance(d, dict):
            raise OracleError(f"{where}: expected an object")
        missing = sorted(KNOWN_KEYS - {"test"} - set(d))
        if missing:
            raise OracleError(f"{where}: missing key '{missing[0]}'")
        extra = sorted(set(d) - KNOWN_KEYS)
        if extra:
            raise OracleError(f"{where}: unknown key '{extra[0]}' (known: {', '.join(sorted(KNOWN_KEYS))})")
        if not isinstance(d["match"], dict) or not d["match"]:
            raise OracleError(f"{where}/match: expected a non-empty object of fields")
        for k in d["match"]:
            if k not in FACETS and not k.startswith("query."):
                raise OracleError(f"{where}/match: unknown field '{k}' ({', '.join(FACETS)}, query.<axis>)")
        out.append(d)
    return out


def load_open(path: str) -> Dict[str, int]:
    """engine + group key -> the most cases the group may have."""
    if not os.path.exists(path):
        return {}
    doc = load_json(path, "open differences")
    if not isinstance(doc, dict) or not isinstance(doc.get("groups"), list):
        raise OracleError(f"open differences {path}: expected an object with a list 'groups'")
    out = {}
    for i, g in enumerate(doc["groups"]):
        where = f"open differences {path}/groups/{i}"
        if not isinstance(g, dict) or not isinstance(g.get("engine"), str) or not isinstance(g.get("key"), str) \
                or not isinstance(g.get("count"), int) or g["count"] < 1:
            raise OracleError(f"{where}: expected {{\"engine\": str, \"key\": str, \"count\": positive int}}")
        out[g["engine"] + " " + g["key"]] = g["count"]
    return out


FACETS = ("engine", "vendor", "arch", "world", "group", "domain", "kind", "engine_answer", "attnsel_answer")


def facets(engine: str, case: Dict[str, Any], k: str, mine: Dict[str, Any]) -> Dict[str, Any]:
    a, w = case["answer"], case["world"]
    f = {"engine": engine, "vendor": w["vendor"], "arch": w.get("arch"), "world": w["name"],
         "group": case["group"], "domain": case["domain"], "kind": k,
         "engine_answer": a.get("backend") or a.get("error"), "attnsel_answer": mine.get("backend") or mine.get("error")}
    for qk, qv in case["query"].items():
        f["query." + qk] = qv
    return f


def matches(want: Dict[str, Any], have: Dict[str, Any]) -> bool:
    """Every field of `want` holds: a list is a set of options, except for query.features, where
    it names features that must all be present."""
    for k, v in want.items():
        got = have.get(k)
        if k == "query.features":
            if not set(v if isinstance(v, list) else [v]) <= set(got or []):
                return False
        elif got not in (v if isinstance(v, list) else [v]):
            return False
    return True


# ----------------------------------------------------------------------------------------- report
def compare_engine(attnsel, doc: Dict[str, Any], known: List[Dict[str, Any]], catalog: Optional[str] = None):
    eng = doc["engine"]
    if eng not in ASKERS:
        raise OracleError(f"engine answers: unknown engine '{eng}' ({', '.join(ASKERS)})")
    import importlib

    asker = importlib.import_module(f"ask_{eng}")
    try:
        reg = attnsel.load_catalog(catalog) if catalog else asker.registry(attnsel)
    except Exception as e:
        raise OracleError(f"catalog for {eng} ({catalog or 'built in'}): does not load: {e}") from None
    per = collections.defaultdict(collections.Counter)
    groups = collections.defaultdict(list)
    known_hits = collections.Counter()
    for c in doc["cases"]:
        dom, a = c["domain"], c["answer"]
        if "not_asked" in a:
            per[dom]["not_asked"] += 1
            groups[("not asked", a["not_asked"][:160])].append({"world": c["world"]["name"], "query": c["query"]})
            continue
        per[dom]["asked"] += 1
        try:
            mine = asker.ask(attnsel, reg, c)
        except Exception as e:  # a question attnsel cannot even parse is a disagreement, never agreement
            mine = {"error": "attnsel_input", "message": f"{type(e).__name__}: {e}"[:300]}
        k = kind(a, mine)
        if k is None:
            per[dom]["agreed"] += 1
            continue
        f = facets(eng, c, k, mine)
        hit = next((d for d in known if d["engine"] == eng and matches(d["match"], f)), None)
        if hit is not None:
            per[dom]["known"] += 1
            known_hits[hit["id"]] += 1
            continue
        per[dom]["unexplained"] += 1
        w = c["world"]
        key = f"{w['vendor']} {w.get('arch') or ''} | {c['group']} | {k}: engine {f['engine_answer']} vs attnsel {f['attnsel_answer']}"
        groups[("unexplained", key)].append({"world": w["name"], "domain": dom, "query": c["query"], "engine": a,
                                             "attnsel": mine})
    return per, groups, known_hits


def settle_open(eng: str, per, groups, allowed: Dict[str, int]) -> None:
    """Moves each unexplained group the open-differences file lists, at no more than its count, to open."""
    for (state, key), rows in list(groups.items()):
        limit = allowed.get(eng + " " + key)
        if state != "unexplained" or limit is None or len(rows) > limit:
            continue
        for r in rows:
            per[r["domain"]]["unexplained"] -= 1
            per[r["domain"]]["open"] += 1
        groups[("open", key)] = groups.pop((state, key))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("answers", nargs="+", help="engine answer files (engine_vllm.py / engine_sglang.py --out)")
    ap.add_argument("--out", default="build/oracle")
    ap.add_argument("--known", default=DEFAULT_KNOWN, help="the known-differences file")
    ap.add_argument("--open", default=DEFAULT_OPEN, help="the open-differences file (groups not yet diagnosed)")
    ap.add_argument("--record-open", action="store_true",
                    help="write every unexplained group, with its count, to the open-differences file")
    ap.add_argument("--catalog", action="append", default=[], metavar="ENGINE=PATH",
                    help="ask this catalog file instead of the built-in one (while editing a catalog)")
    args = ap.parse_args(argv)
    try:
        try:
            import attnsel
        except ImportError as e:
            raise OracleError(f"cannot import attnsel ({e}); build it: cmake --build build/dev --target attnsel_python") from None
        known = load_known(args.known)
        allowed = {} if args.record_open else load_open(args.open)
        recorded: List[Dict[str, Any]] = []
        catalogs = {}
        for spec in args.catalog:
            eng, sep, path = spec.partition("=")
            if not sep or eng not in ASKERS or not path:
                raise OracleError(f"--catalog '{spec}': expected ENGINE=PATH with ENGINE one of {', '.join(ASKERS)}")
            catalogs[eng] = path
        report: Dict[str, Any] = {"engines": {}, "known": {d["id"]: {k: d[k] for k in ("cause", "doc", "test") if k in d}
                                                            for d in known}}
        md = ["# attnsel differential oracle report", ""]
        os.makedirs(args.out, exist_ok=True)
        status = 0
        for path in args.answers:
            doc = load_json(path, "engine answers")
            if not isinstance(doc, dict) or "cases" not in doc or "engine" not in doc or "version" not in doc:
                raise OracleError(f"engine answers {path}: missing 'engine', 'version' or 'cases'")
            eng = doc["engine"]
            per, groups, known_hits = compare_engine(attnsel, doc, known, catalogs.get(eng))
            settle_open(eng, per, groups, allowed)
            recorded += [{"engine": eng, "key": k[1], "count": len(v)} for k, v in groups.items() if k[0] == "unexplained"]
            tot = collections.Counter()
            for v in per.values():
                tot.update(v)
            unexplained = sorted(((k, v) for k, v in groups.items() if k[0] == "unexplained"), key=lambda kv: -len(kv[1]))
            still_open = sorted(((k, v) for k, v in groups.items() if k[0] == "open"), key=lambda kv: -len(kv[1]))
            not_asked = sorted(((k, v) for k, v in groups.items() if k[0] == "not asked"), key=lambda kv: -len(kv[1]))
            report["engines"][eng] = {
                "version": doc["version"],
                "domains": {d: {k: v.get(k, 0) for k in ("asked", "agreed", "known", "open", "unexplained", "not_asked")}
                            for d, v in sorted(per.items())},
                "known": dict(known_hits),
                "unexplained": [{"key": k[1], "count": len(v), "examples": v[:3]} for k, v in unexplained],
                "open": [{"key": k[1], "count": len(v), "examples": v[:3]} for k, v in still_open],
                "not_asked": [{"reason": k[1], "count": len(v)} for k, v in not_asked]}
            print(f"{eng} {doc['version']}: asked {tot['asked']}, agreed {tot['agreed']}, known differences "
                  f"{tot['known']}, open {tot['open']}, unexplained {tot['unexplained']}, not asked {tot['not_asked']}")
            for k, v in unexplained[:10]:
                print(f"  unexplained ({len(v)}): {k[1]}")
            if (tot["unexplained"] and not args.record_open) or tot["not_asked"]:
                status = 1
            md += [f"## {eng} {doc['version']}", "",
                   "| domain | asked | agreed | known differences | open | unexplained | not asked |",
                   "|---|---:|---:|---:|---:|---:|---:|"]
            for d, v in sorted(per.items()):
                md.append(f"| {d} | {v['asked']} | {v['agreed']} | {v['known']} | {v['open']} | {v['unexplained']} | "
                          f"{v['not_asked']} |")
            if known_hits:
                md += ["", "Known differences (docs/catalog-sources.md):", ""]
                for kid, n in sorted(known_hits.items(), key=lambda kv: -kv[1]):
                    md.append(f"- `{kid}` ({n}): {report['known'][kid]['cause']}")
            for title, rows in (("Unexplained disagreements", unexplained), ("Open (seen, not yet diagnosed)", still_open),
                                ("Not asked", not_asked)):
                if rows:
                    md += ["", f"### {title}", ""]
                    for k, v in rows:
                        md.append(f"- **{k[1]}** ({len(v)})")
                        for ex in v[:3]:
                            md.append(f"  - {ex['world']} `{json.dumps(ex['query'])}`"
                                      + (f": engine `{json.dumps(ex['engine'])[:200]}`; attnsel `{json.dumps(ex['attnsel'])[:200]}`"
                                         if "engine" in ex else ""))
            md.append("")
        if args.record_open:
            with open(args.open, "w", encoding="utf-8") as f:
                json.dump({"about": "Disagreements the oracle has seen and nobody has diagnosed yet: each group may "
                                    "have at most `count` cases; compare.py reports them as open, never as agreed. "
                                    "Written by compare.py --record-open.", "groups": recorded}, f, indent=1)
                f.write("\n")
        with open(os.path.join(args.out, "report.json"), "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        with open(os.path.join(args.out, "report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(md) + "\n")
        return status
    except OracleError as e:
        sys.stderr.write(f"compare: error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
