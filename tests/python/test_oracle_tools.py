# SPDX-License-Identifier: Apache-2.0
"""The differential oracle's own tools (tools/oracle/, scripts/oracle.sh): how they classify answers, and
the clear error each gives for bad input. The engines themselves run only in scripts/oracle.sh (CI)."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

ORACLE = SOURCE_DIR / "tools" / "oracle"
sys.path.insert(0, str(ORACLE))

import common  # noqa: E402
import compare  # noqa: E402
import ask_sglang  # noqa: E402
import engine_sglang  # noqa: E402
import engine_vllm  # noqa: E402


def run(args, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, **kw)


def case(answer, vendor="cuda", arch="9.0", group="decoder", **query):
    return {"world": {"vendor": vendor, "arch": arch, "name": f"{vendor}-{arch}", "components": []},
            "group": group, "domain": "decoder", "query": {"head_size": 128, **query}, "answer": answer}


# ------------------------------------------------------------------------------- classification
def test_answers_agree_on_the_same_backend_or_when_both_refuse():
    assert compare.kind({"backend": "FLASH_ATTN"}, {"backend": "FLASH_ATTN"}) is None
    assert compare.kind({"error": "ValueError"}, {"error": "no_backend"}) is None
    assert compare.kind({"backend": "FLASH_ATTN"}, {"backend": "TRITON_ATTN"}) == "different backend"
    assert compare.kind({"backend": "FLASH_ATTN"}, {"error": "no_backend"}) == "attnsel refuses, engine selects"
    assert compare.kind({"error": "ValueError"}, {"backend": "CPU_ATTN"}) == "engine refuses, attnsel selects"


def test_a_known_difference_matches_only_on_every_facet_it_names():
    f = compare.facets("vllm", case({"backend": "CPU_ATTN"}, vendor="cpu", arch=None, features=["sinks"]),
                       "attnsel refuses, engine selects", {"error": "no_backend"})
    assert compare.matches({"vendor": "cpu", "engine_answer": "CPU_ATTN"}, f)
    assert compare.matches({"vendor": ["rocm", "cpu"]}, f)  # a list is a set of options
    assert compare.matches({"query.features": ["sinks"]}, f)  # features: all named ones present
    assert not compare.matches({"query.features": ["sinks", "alibi"]}, f)
    assert not compare.matches({"vendor": "cpu", "attnsel_answer": "backend_rejected"}, f)
    assert not compare.matches({"query.head_size": 64}, f)


def test_every_committed_known_difference_names_its_cause_and_reads():
    entries = compare.load_known(compare.DEFAULT_KNOWN)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), "known-difference ids are unique"
    for e in entries:
        assert e["engine"] in compare.ASKERS
        assert len(e["cause"]) > 20, e["id"]
        assert e["doc"].startswith("docs/"), e["id"]
        # The page it names explains it by id (docs/catalog-sources.md's release sections).
        page = os.path.join(SOURCE_DIR, e["doc"].split("#")[0])
        with open(page, encoding="utf-8") as f:
            assert "`" + e["id"] + "`" in f.read(), e["id"] + " is not explained in " + e["doc"]


@pytest.mark.parametrize("doc, message", [
    ({"differences": [{"id": "x", "engine": "vllm", "match": {"vendor": "cpu"}, "cause": "c"}]}, "missing key 'doc'"),
    ({"differences": [{"id": "x", "engine": "vllm", "match": {}, "cause": "c", "doc": "d"}]}, "non-empty object"),
    ({"differences": [{"id": "x", "engine": "vllm", "match": {"vendr": "cpu"}, "cause": "c", "doc": "d"}]},
     "unknown field 'vendr'"),
    ({"differences": [{"id": "x", "engine": "vllm", "match": {"vendor": "cpu"}, "cause": "c", "doc": "d", "oops": 1}]},
     "unknown key 'oops'"),
    ({"diffs": []}, "expected an object with a list 'differences'"),
])
def test_a_bad_known_differences_file_is_refused_at_its_entry(tmp_path, doc, message):
    path = tmp_path / "known.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(common.OracleError, match=message):
        compare.load_known(str(path))


# ----------------------------------------------------------------------------------- compare.py
def answers_file(tmp_path, cases, engine="vllm"):
    path = tmp_path / f"{engine}_answers.json"
    path.write_text(json.dumps({"engine": engine, "version": "0", "cases": cases}))
    return path


def test_compare_agrees_with_an_engine_answer_attnsel_gives(tmp_path):
    # On Hopper with FlashInfer, vLLM's catalog picks FLASH_ATTN for a plain bf16 head-128 layer.
    c = case({"backend": "FLASH_ATTN"}, dtype="bfloat16", kv_cache_dtype="auto")
    c["world"]["components"] = ["flashinfer"]
    r = run([sys.executable, str(ORACLE / "compare.py"), str(answers_file(tmp_path, [c])), "--out", str(tmp_path)])
    assert r.returncode == 0, r.stderr
    assert "asked 1, agreed 1" in r.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["engines"]["vllm"]["domains"]["decoder"]["agreed"] == 1


def test_compare_fails_on_an_unexplained_disagreement_and_on_a_case_not_asked(tmp_path):
    wrong = case({"backend": "TRITON_ATTN"}, dtype="bfloat16", kv_cache_dtype="auto")
    missing = case({"not_asked": "world setup failed: ImportError"}, dtype="bfloat16", kv_cache_dtype="auto")
    known = tmp_path / "known.json"
    known.write_text('{"differences": []}')
    for cases, line in (([wrong], "unexplained 1"), ([missing], "not asked 1")):
        r = run([sys.executable, str(ORACLE / "compare.py"), str(answers_file(tmp_path, cases)), "--out",
                 str(tmp_path), "--known", str(known), "--open", str(tmp_path / "none.json")])
        assert r.returncode == 1, r.stdout + r.stderr
        assert line in r.stdout


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text("{not json"), "not JSON: line 1"),
    (lambda p: p.write_text('{"engine": "vllm"}'), "missing 'engine', 'version' or 'cases'"),
    (lambda p: p.write_text('{"engine": "trtllm", "version": "1", "cases": []}'), "unknown engine 'trtllm'"),
])
def test_compare_names_a_bad_answers_file(tmp_path, make, message):
    path = tmp_path / "answers.json"
    make(path)
    r = run([sys.executable, str(ORACLE / "compare.py"), str(path), "--out", str(tmp_path)])
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_compare_names_a_catalog_that_does_not_load(tmp_path):
    bad = tmp_path / "vllm@0.33.0.json"
    bad.write_text('{"format": "attnsel-catalog", "version": 2, "name": "x", "backends": [{"name": "lower"}]}')
    answers = answers_file(tmp_path, [case({"backend": "FLASH_ATTN"}, dtype="bfloat16", kv_cache_dtype="auto")])
    for args, message in (([f"vllm={bad}"], "does not load"), (["trtllm=x.json"], "expected ENGINE=PATH")):
        r = run([sys.executable, str(ORACLE / "compare.py"), str(answers), "--out", str(tmp_path),
                 *[a for spec in args for a in ("--catalog", spec)]])
        assert r.returncode == 2, r.stdout
        assert message in r.stderr
        assert "Traceback" not in r.stderr


# ------------------------------------------------------------------------------------- the grid
def test_the_committed_grids_read_and_are_large_enough():
    grid = common.load_json(str(SOURCE_DIR / "tests" / "data" / "oracle" / "vllm_grid.json"), "grid")
    cases = engine_vllm.cases_of(grid)
    assert len(cases) >= 20_000
    assert {c["world"]["vendor"] for c in cases} == {"cuda", "rocm", "xpu", "cpu"}
    assert {c["domain"] for c in cases} == {"decoder", "encoder", "mla_prefill", "linear"}
    # the sample is fixed: the same seed gives the same cases
    assert common.sample(cases, 50) == common.sample(cases, 50)


def test_the_sglang_grid_reads_with_its_linear_group_in_every_world():
    grid = common.load_json(str(SOURCE_DIR / "tests" / "data" / "oracle" / "sglang_grid.json"), "grid")
    cases = engine_sglang.cases_of(grid)
    assert len(cases) >= 2_000
    assert {c["domain"] for c in cases} == {"decoder", "encoder", "linear"}
    linear = [c for c in cases if c["group"] == "linear"]
    assert {c["world"]["vendor"] for c in linear} == {"cuda", "rocm", "xpu", "cpu"}
    assert {c["query"]["model"] for c in linear} == set(engine_sglang.LINEAR_KIND) == set(ask_sglang.LINEAR_MODELS)


def test_a_linear_case_is_asked_as_a_linear_layer_with_its_kinds_flag():
    world = {"vendor": "cuda", "arch": "10.0", "cuda_runtime": "12.8", "flashinfer": True}
    kda = {"group": "linear", "world": world, "query": {"model": "kimi_linear_safe_gate", "dtype": "bfloat16",
                                                       "ssm_dtype": "bfloat16", "override": "helion", "phase": "decode"}}
    assert ask_sglang.query_json(kda) == {"domain": "linear", "mode": "gated_delta", "dtype": "bfloat16",
                                          "phase": "decode", "features": ["bf16_ssm_state", "kda", "safe_gate"]}
    assert ask_sglang.flags_of(kda) == ["--linear-attn-backend", "helion"]
    mamba = {**kda, "query": {"model": "nemotron_h", "override": "flashinfer", "phase": "prefill"}}
    assert ask_sglang.flags_of(mamba) == ["--mamba-backend", "flashinfer"]
    assert ask_sglang.query_json(mamba)["mode"] == "mamba2"
    # The engine side writes the same flags, and drops the radix cache a CPU world cannot hold.
    argv = engine_sglang.argv_of(kda["query"], "/m")
    assert argv[-5:] == ["--disable-radix-cache", "--mamba-ssm-dtype", "bfloat16", "--linear-attn-backend", "helion"]
    assert engine_sglang.argv_of(mamba["query"], "/m")[-2:] == ["--mamba-backend", "flashinfer"]


@pytest.mark.parametrize("domains, message", [
    ({"linear": {"model": ["llama"]}}, "grid/domains/linear/model: 'llama' is not a hybrid model of the linear group"),
    ({"mha": {"model": ["qwen3_next"]}}, "grid/domains/mha/model: 'qwen3_next' is a hybrid model: ask for it in the "
                                         "linear group"),
    ({"linear": {"model": ["nemotron_h"], "ssm_dtype": ["bf16"]}}, "grid/domains/linear/ssm_dtype: 'bf16' is not one"),
])
def test_a_bad_sglang_grid_is_refused_with_where(tmp_path, domains, message):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({"engine": "sglang", "worlds": {"cpu": {"amx": [False]}}, "domains": domains}))
    r = run([sys.executable, str(ORACLE / "engine_sglang.py"), "--grid", str(path), "--out", str(tmp_path / "a.json")])
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("grid, message", [
    ({"engine": "sglang", "domains": {}}, "'engine' must be"),
    ({"engine": "vllm", "worlds": {"cpu": {"isa": ["avx9"]}}, "domains": {}}, "unknown value 'avx9'"),
    ({"engine": "vllm", "worlds": {"xpu": {"arch": ["xpu"]}}, "domains": {"decodr": {"head_size": [64]}}},
     "unknown group 'decodr'"),
    ({"engine": "vllm", "worlds": {"xpu": {"arch": ["xpu"]}}, "domains": {"decoder": {"head_size": []}}},
     "grid/domains/decoder/head_size: expected a non-empty list"),
])
def test_a_bad_grid_is_refused_with_where(tmp_path, grid, message):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid))
    r = run([sys.executable, str(ORACLE / "engine_vllm.py"), "--grid", str(path), "--out", str(tmp_path / "a.json")])
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------------------------- oracle.sh
@pytest.mark.parametrize("args, message", [
    (["--engine", "trtllm"], "--engine 'trtllm' is not one of vllm, sglang, all"),
    (["--sample", "many"], "'many' is not a number"),
    (["--frobnicate"], "unknown argument '--frobnicate'"),
])
def test_oracle_sh_refuses_bad_arguments_before_installing_anything(tmp_path, args, message):
    env = dict(os.environ, ATTNSEL_ORACLE_VENV=str(tmp_path / "venv"))
    r = subprocess.run(["bash", str(SOURCE_DIR / "scripts" / "oracle.sh"), *args], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2
    assert message in r.stderr
    assert not (tmp_path / "venv").exists()


def test_oracle_sh_refuses_an_engine_version_that_is_not_the_pinned_one(tmp_path):
    # A venv whose stamp says it holds the pins, but whose python has no vLLM: the pin check names it.
    root = SOURCE_DIR
    digest = hashlib.sha256()
    for name in ("tools/oracle/requirements.txt", "tools/oracle/cuda_stub.c"):
        digest.update((root / name).read_bytes())
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / ".attnsel-oracle-stamp").write_text(digest.hexdigest()[:12] + "\n")
    r = subprocess.run(["bash", str(root / "scripts" / "oracle.sh"), "--engine", "vllm"], capture_output=True,
                       text=True, env=dict(os.environ, ATTNSEL_ORACLE_VENV=str(venv)), timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "the oracle pins 0.33.0" in r.stderr
    assert "installing" not in r.stdout  # the stamp matched: nothing was installed


def test_an_open_group_is_reported_as_open_until_it_grows(tmp_path):
    # A group recorded with --record-open is tolerated at its count, reported as open (never agreed); one
    # case more, or a new group, is unexplained again.
    wrong = case({"backend": "TRITON_ATTN"}, dtype="bfloat16", kv_cache_dtype="auto")
    known = tmp_path / "known.json"
    known.write_text('{"differences": []}')
    opened = tmp_path / "open.json"
    base = [sys.executable, str(ORACLE / "compare.py"), "--out", str(tmp_path), "--known", str(known), "--open",
            str(opened)]
    r = run(base + [str(answers_file(tmp_path, [wrong])), "--record-open"])
    assert r.returncode == 0, r.stderr
    assert json.loads(opened.read_text())["groups"][0]["count"] == 1
    r = run(base + [str(answers_file(tmp_path, [wrong]))])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "agreed 0" in r.stdout and "open 1, unexplained 0" in r.stdout
    r = run(base + [str(answers_file(tmp_path, [wrong, wrong]))])
    assert r.returncode == 1
    assert "open 0, unexplained 2" in r.stdout
    opened.write_text('{"groups": [{"engine": "vllm", "key": "x", "count": 0}]}')
    r = run(base + [str(answers_file(tmp_path, [wrong]))])
    assert r.returncode == 2 and "positive int" in r.stderr


# ------------------------------------------------------------------------------- adapter flags
def test_adapter_flags_tells_accepted_from_refused_and_misread_lines():
    # A stand-in engine parser: one choice-restricted flag, one free-text flag the engine converts later
    # (as vLLM's --attention-backend), one it stores under another spelling.
    import argparse

    import adapter_flags

    p = argparse.ArgumentParser(prog="engine")
    p.add_argument("--attention-backend", choices=["fa3", "triton"])
    p.add_argument("--mm-backend")
    p.add_argument("--page-size", type=lambda t: int(t) * 2)  # reads another value than it was given

    def convert(text):
        if text != "SDPA":
            raise ValueError(f"unknown backend {text!r}")
        return text

    def refuse():
        raise ValueError("not a name of this flag")

    cases = [("ok", lambda: ["--attention-backend", "fa3", "--mm-backend", "SDPA"]),
             ("choice", lambda: ["--attention-backend", "FA3"]),  # argparse choices are case-sensitive
             ("unknown flag", lambda: ["--decode-backend", "fa3"]),
             ("converted", lambda: ["--mm-backend", "NOPE"]),
             ("misread", lambda: ["--page-size", "64"]),
             ("adapter", refuse)]
    report = adapter_flags.check(p, cases, [], {"mm_backend": convert})
    assert report["counts"] == {"accepted": 1, "refused_by_adapter": 1, "refused_by_engine": 3, "misread": 1}
    by = {r["case"]: r for r in report["cases"]}
    assert "invalid choice: 'FA3'" in by["choice"]["why"]
    assert "unrecognized arguments: --decode-backend fa3" in by["unknown flag"]["why"]
    assert by["converted"]["why"] == "the engine refuses --mm-backend NOPE: unknown backend 'NOPE'"
    assert by["misread"]["why"] == "--page-size: the engine holds 128, the adapter wrote '64'"
