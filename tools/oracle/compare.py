# SPDX-License-Identifier: Apache-2.0
"""attnsel side of the differential oracle: asks attnsel every question the engine answered and
writes report.json / report.md (docs/oracle.md). Needs `import attnsel` (PYTHONPATH=build/dev/python)."""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import OracleError, load_json  # noqa: E402

# engine name -> attnsel name where they differ (vLLM MLA prefill backends live in attnsel's vllm
# catalog as MLA_PREFILL_*)
MLA_PREFILL_NAMES = {"FLASH_ATTN": "MLA_PREFILL_FLASH_ATTN", "FLASHINFER": "MLA_PREFILL_FLASHINFER",
                     "TRTLLM_RAGGED": "MLA_PREFILL_TRTLLM_RAGGED", "TOKENSPEED_MLA": "MLA_PREFILL_TOKENSPEED",
                     "ROCM_AITER_FA": "MLA_PREFILL_ROCM_AITER_FA", "CPU": "MLA_PREFILL_CPU"}
ROCM_AITER_COMPONENTS = {"absent": [], "installed_off": ["aiter"],
                         "on": ["aiter", "aiter_enabled", "aiter_mha", "aiter_mla"],
                         "on_no_mha": ["aiter", "aiter_enabled", "aiter_mla"],
                         "on_no_mla": ["aiter", "aiter_enabled", "aiter_mha"]}


def platform_json(world):
    p = {"vendor": world["vendor"]}
    comps = list(world["components"])
    if world["vendor"] == "cuda":
        p["capability"] = world["arch"]
    elif world["vendor"] == "rocm":
        p["arch"] = world["arch"]
        comps = ROCM_AITER_COMPONENTS[world.get("aiter", "absent")]
    p["components"] = comps
    return p


def query_json(case):
    q, g = case["query"], case["group"]
    if g == "encoder":
        return {"domain": "encoder", "head_size": q["head_size"], "dtype": q["dtype"]}
    if g == "mla_prefill":
        nope, rope, v = q["dims"]
        return {"head_size": nope + rope, "head_size_v": v, "dtype": q["dtype"], "mode": "mla", "phase": "prefill"}
    out = {"head_size": q["head_size"], "dtype": q["dtype"], "kv_cache_dtype": q["kv_cache_dtype"]}
    if q.get("block_size"):
        out["block_size"] = q["block_size"]
    if g.startswith("mla"):
        out["mode"] = "sparse_mla" if q.get("sparse") else "mla"
        if q.get("num_heads"):
            out["num_heads"] = q["num_heads"]
    else:
        out["attn_type"] = q.get("attn_type", "decoder")
        if q.get("features"):
            out["features"] = q["features"]
    return out


def ask_attnsel(attnsel, reg, case):
    platform = attnsel.Platform.from_json(json.dumps(platform_json(case["world"])))
    query = attnsel.Query.from_json(json.dumps(query_json(case)))
    override = case["query"].get("override") or ""
    if case["group"] == "mla_prefill" and override:
        override = MLA_PREFILL_NAMES.get(override, override)
    ex = attnsel.explain(reg, query, platform, override)
    if ex.ok:
        return {"backend": ex.result.backend}
    return {"error": ex.result.code, "message": ex.result.message[:300]}


def kind(engine, mine):
    if "backend" in engine and "backend" in mine:
        return "different backend"
    if "backend" in engine:
        return "attnsel refuses, engine selects"
    if "backend" in mine:
        return "engine refuses, attnsel selects"
    return None  # both refuse: agreement


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("answers", nargs="+")
    ap.add_argument("--out", default="build/oracle")
    args = ap.parse_args(argv)
    try:
        try:
            import attnsel
        except ImportError as e:
            raise OracleError(f"cannot import attnsel ({e}); build it: cmake --build build/dev --target attnsel_python") from None
        report = {"engines": {}}
        md = ["# attnsel differential oracle report", ""]
        os.makedirs(args.out, exist_ok=True)
        for path in args.answers:
            doc = load_json(path, "engine answers")
            if not isinstance(doc, dict) or "cases" not in doc or "engine" not in doc:
                raise OracleError(f"engine answers {path}: missing 'engine' or 'cases'")
            eng = doc["engine"]
            try:
                reg = attnsel.builtin_catalog(eng)
            except Exception as e:
                raise OracleError(f"catalog {eng}: does not load: {e}") from None
            per = collections.defaultdict(lambda: collections.Counter())
            groups = collections.defaultdict(list)
            for c in doc["cases"]:
                dom = c["domain"]
                a = c["answer"]
                if "not_asked" in a:
                    per[dom]["not_asked"] += 1
                    continue
                per[dom]["asked"] += 1
                try:
                    mine = ask_attnsel(attnsel, reg, c)
                except Exception as e:
                    mine = {"error": "attnsel_input", "message": f"{type(e).__name__}: {e}"[:300]}
                k = kind(a, mine)
                if k is None and "backend" in a and a["backend"] != mine["backend"]:
                    k = "different backend"
                if k is None and "backend" in a and "backend" in mine and a["backend"] == mine["backend"]:
                    k = None
                if k is None:
                    per[dom]["agreed"] += 1
                    continue
                if "backend" in a and "backend" in mine and a["backend"] == mine["backend"]:
                    per[dom]["agreed"] += 1
                    continue
                per[dom]["disagreed"] += 1
                w = c["world"]
                key = f"{w['vendor']} {w.get('arch') or ''} | {c['group']} | {k}"
                if k == "different backend":
                    key += f": engine {a['backend']} vs attnsel {mine['backend']}"
                elif "backend" in a:
                    key += f": engine {a['backend']} vs attnsel {mine['error']}"
                else:
                    key += f": engine {a['error']} vs attnsel {mine['backend']}"
                groups[key].append({"world": w["name"], "query": c["query"], "engine": a, "attnsel": mine})
            gl = sorted(groups.items(), key=lambda kv: -len(kv[1]))
            report["engines"][eng] = {"domains": {d: dict(v) for d, v in per.items()},
                                      "groups": [{"key": k, "count": len(v), "examples": v[:3]} for k, v in gl]}
            tot = collections.Counter()
            for v in per.values():
                tot.update(v)
            print(f"{eng}: asked {tot['asked']}, agreed {tot['agreed']}, disagreed {tot['disagreed']}, "
                  f"not asked {tot['not_asked']}")
            md += [f"## {eng}", "", "| domain | asked | agreed | disagreed | not asked |", "|---|---|---|---|---|"]
            for d, v in sorted(per.items()):
                md.append(f"| {d} | {v['asked']} | {v['agreed']} | {v['disagreed']} | {v['not_asked']} |")
            md += ["", "### Disagreements by cause", ""]
            for k, v in gl:
                md.append(f"- **{k}** ({len(v)})")
                for ex in v[:3]:
                    md.append(f"  - {ex['world']} `{json.dumps(ex['query'])}`: engine `{json.dumps(ex['engine'])[:200]}`; "
                              f"attnsel `{json.dumps(ex['attnsel'])[:200]}`")
            md.append("")
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
        with open(os.path.join(args.out, "report.md"), "w") as f:
            f.write("\n".join(md) + "\n")
        return 0
    except OracleError as e:
        sys.stderr.write(f"compare: error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
