# SPDX-License-Identifier: Apache-2.0
# attnsel.tune without a GPU: fake timings drive the ranking, the overlay writer and the report; the
# overlay loads on torch_sdpa, picks the measured fastest on the measured machine, and is refused (its
# rules stale, with what differs) on another device or torch version; a backend with wrong output is
# excluded and reported.
import json

import pytest

import attnsel
from attnsel import tune
from runners import ScriptedRunner

H200 = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0"])
        .with_device_name("NVIDIA H200"))


class FakeRunner(tune.Runner):
    """Times from a table (backend -> microseconds, scaled by the class's work); some outputs wrong."""

    def __init__(self, base_us, wrong=(), default="CUDNN_ATTENTION", noise=0.02):
        self.base_us, self.wrong, self.default, self.noise = base_us, set(wrong), default, noise
        self.timed = []

    def torch_default(self, w, c):
        return self.default

    def check(self, w, c, backend):
        return "wrong output: max abs error 0.5" if backend in self.wrong else None

    def time(self, w, c, backend, reps):
        self.timed.append((c.name, backend))
        work = c.batch * c.seq_q * c.seq_kv / 1e6
        base = self.base_us[backend] * (1 + work)
        return [base * (1 + self.noise * (i % 5 - 2) / 2) for i in range(reps)]


def llama(classes=None):
    return tune.Workload("llama3-8b", 32, 8, 128, 128, "bfloat16",
                         classes or tune.decoder_classes([128, 2048], [1, 64], [1024, 8192]))


def fresh_registry():
    return attnsel.torch_sdpa_registry()


def test_split_ranges_cover_without_gaps():
    ranges = tune.split_ranges([128, 512, 2048], 2, 1 << 30)
    assert ranges[0][0] == 2 and ranges[-1][1] == 1 << 30
    for (lo, hi), (nlo, _) in zip(ranges, ranges[1:]):
        assert lo <= hi and nlo == hi + 1
    # each point lies in its own range, split at the geometric midpoint
    assert [lo <= p <= hi for p, (lo, hi) in zip([128, 512, 2048], ranges)] == [True] * 3
    assert ranges[0] == (2, 256)
    with pytest.raises(ValueError):
        tune.split_ranges([1], 2, 10)


def test_decoder_classes_shape_and_refusals():
    classes = tune.decoder_classes([128, 2048], [1, 64], [1024, 8192])
    names = [c.name for c in classes]
    assert names == ["prefill 128", "prefill 2048", "decode b1 kv1024", "decode b1 kv8192", "decode b64 kv1024",
                     "decode b64 kv8192"]
    prefill = classes[0]
    assert prefill.causal and prefill.seq_q == prefill.seq_kv == 128 and prefill.seq_q_range[0] == 2
    decode = classes[-1]
    assert not decode.causal and decode.seq_q == 1 and decode.seq_q_range == (1, 1)
    assert decode.batch_range[0] <= 64 <= decode.batch_range[1]
    with pytest.raises(ValueError, match="decode call"):
        tune.decoder_classes([1], [], [])
    with pytest.raises(ValueError, match="not an integer"):
        tune.decoder_classes([0], [], [])
    with pytest.raises(ValueError, match="at least one"):
        tune.decoder_classes([], [1], [])


def test_preset_names():
    assert [w.name for w in tune.preset("llm+vit")] == ["llama3-8b", "opt-1.3b", "gemma3-4b", "vit-d64", "vit-d80"]
    # The other decoders share Llama's classes (the same ranges), so a rule can span their head sizes.
    llama, *others = tune.preset("decoders")
    assert all(set(w.classes) <= set(llama.classes) and w.classes for w in others)
    assert sorted(w.head_size for w in tune.preset("decoders")) == [64, 128, 256]
    with pytest.raises(ValueError, match="llama3-8b"):
        tune.preset("gpt5")


def test_measure_ranks_supported_backends_and_skips_unsupported():
    reg = fresh_registry()
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0, "MATH": 400.0})
    w = llama()
    r = tune.measure(w, w.classes[0], reg, H200, runner)
    names = [t.backend for t in r.timings]
    assert names == sorted(names, key=lambda b: runner.base_us[b])  # fastest first
    assert r.fastest.backend == "FLASH_ATTENTION"
    assert r.torch_default == "CUDNN_ATTENTION"
    assert r.fastest.spread_pct > 0 and r.fastest.reps == tune.Method().rounds * tune.Method().reps
    # float32: the catalog says flash cannot run it, so it is neither timed nor ranked
    w32 = tune.Workload("fp32", 32, 8, 128, 128, "float32", tune.decoder_classes([128], [], []))
    r32 = tune.measure(w32, w32.classes[0], reg, H200, FakeRunner(runner.base_us, default="MATH"))
    assert "FLASH_ATTENTION" in r32.unsupported and "dtype" in r32.unsupported["FLASH_ATTENTION"]
    assert "FLASH_ATTENTION" not in [t.backend for t in r32.timings] and r32.timings


def test_wrong_output_is_excluded_and_reported():
    reg = fresh_registry()
    # (a fake: here MATH is the fastest correct backend, so the rule moves it first)
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 5.0, "EFFICIENT_ATTENTION": 40.0, "MATH": 10.0},
                        wrong={"FLASH_ATTENTION"})
    w = llama(tune.decoder_classes([2048], [], []))
    results = tune.tune([w], reg, H200, runner)
    r = results[0].results[0]
    assert "FLASH_ATTENTION" in r.excluded and "wrong output" in r.excluded["FLASH_ATTENTION"]
    assert all(t.backend != "FLASH_ATTENTION" for t in r.timings)
    assert ("prefill 2048", "FLASH_ATTENTION") not in runner.timed  # never timed, never ranked
    doc = tune.overlay(results)
    assert doc["policies"][0]["order"][0] == "MATH"
    assert "FLASH_ATTENTION" not in doc["policies"][0]["order"]  # wrong here: never a fallback either
    assert "excluded FLASH_ATTENTION" in doc["policies"][0]["note"]
    rows = tune.regret_rows(results, lambda w_, c: "CUDNN_ATTENTION")
    text = tune.report(results, rows)
    assert "excluded FLASH_ATTENTION in llama3-8b prefill 2048: wrong output" in text


def test_budget_skips_and_lists_the_rest():
    ticks = iter(range(0, 1000, 10))
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0, "MATH": 400.0})
    results = tune.tune([llama()], fresh_registry(), H200, runner, budget_s=25, clock=lambda: next(ticks))
    measured = [r.shape.name for r in results[0].results]
    skipped = [name for name, _ in results[0].skipped]
    assert measured and skipped and len(measured) + len(skipped) == 6
    assert all("budget" in why for _, why in results[0].skipped)


def overlay_for(runner, platform=H200):
    results = tune.tune([llama()], fresh_registry(), platform, runner)
    return results, tune.overlay(results, command="python -m attnsel.tune --preset test")


def test_overlay_loads_and_selects_the_measured_fastest(tmp_path):
    # cuDNN is fastest for prefill, flash for decode: the opposite of nothing torch_sdpa states.
    class PhaseRunner(FakeRunner):
        def time(self, w, c, backend, reps):
            fast = "CUDNN_ATTENTION" if c.kind == "prefill" else "FLASH_ATTENTION"
            return [10.0 if backend == fast else 50.0 + len(backend)] * reps

    results, doc = overlay_for(PhaseRunner({}))
    # cuDNN is the H200's default: the prefill classes keep it and get no rule; the four decode classes move.
    assert doc["version"] == 2 and len(doc["policies"]) == 4
    assert all(r["order"][0] == "FLASH_ATTENTION" and "confirmed" in r["note"] for r in doc["policies"])
    rule = doc["policies"][0]
    assert rule["measured"]["device"] == "NVIDIA H200"
    assert rule["measured"]["components"] == ["torch=2.11.0", "cudnn=9.19.0"]
    assert rule["min_capability"] == rule["max_capability"] == "9.0"
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(doc))
    reg = fresh_registry()
    reg.merge(str(path))
    choose = tune.tuned_choice(reg, H200)
    w = results[0].workload
    for c in w.classes:
        assert choose(w, c) == ("CUDNN_ATTENTION" if c.kind == "prefill" else "FLASH_ATTENTION"), c.name
    # explain shows each candidate's measured time under the measured rule
    ex = attnsel.explain(reg, tune.query_of(w, w.classes[-1]), H200)
    assert "measured" in ex.rule or ex.note.startswith("measured")
    times = {c.name: c.measured for c in ex.candidates if c.measured}
    assert times["FLASH_ATTENTION"]["median_us"] == 10.0
    assert ex.stale == []
    # the report reads the regret off the overlay's own answers
    rows = tune.regret_rows(results, choose)
    assert all(r["tuned_regret"] == 1.0 for r in rows)
    assert "Geometric-mean regret" in tune.report(results, rows)


@pytest.mark.parametrize("other, differs", [
    (H200.with_device_name("NVIDIA H100 80GB HBM3"), "device NVIDIA H100 80GB HBM3 (measured on NVIDIA H200)"),
    (H200.with_components("torch=2.10.0"), "torch=2.10.0 (measured with torch=2.11.0)"),
    (H200.with_device_name(None), "no device name stated (measured on NVIDIA H200)"),
    # TORCH_CUDNN_SDPA_DEPRIORITIZED=1: torch's default order differs, so the rules were never checked there
    (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "torch=2.11.0"]).with_device_name("NVIDIA H200"),
     "no cudnn_preferred (measured with it)"),
    (attnsel.Platform.cuda(10, 0, components=["cudnn=9.19.0", "torch=2.11.0"]).with_device_name("NVIDIA H200"),
     "platform cuda 10.0 is outside the rule's arch"),
])
def test_overlay_is_refused_on_another_machine(tmp_path, other, differs):
    class SlowCudnn(FakeRunner):
        def time(self, w, c, backend, reps):
            return [5.0 if backend == "MATH" else 50.0] * 5  # a ranking no catalog would state

    _, doc = overlay_for(SlowCudnn({}))
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(doc))
    reg = fresh_registry()
    reg.merge(str(path))
    w = llama()
    q = tune.query_of(w, w.classes[0])
    assert attnsel.select(reg, q, H200).backend == "MATH"  # the measured machine follows the measurement
    base = attnsel.select(fresh_registry(), q, other).backend
    assert attnsel.select(reg, q, other).backend == base  # elsewhere: the catalog's own answer
    ex = attnsel.explain(reg, q, other)
    assert ex.stale, "a set-aside measurement is reported"
    assert differs in ex.stale[0]["differences"]
    assert "NVIDIA H200" in ex.stale[0]["measured_on"]
    assert all(c.measured is None for c in ex.candidates)
    report = json.loads(attnsel.to_json(ex))
    assert report["stale"][0]["differences"] == ex.stale[0]["differences"]


def test_overlay_refuses_bad_measured_blocks(tmp_path):
    _, doc = overlay_for(FakeRunner({"CUDNN_ATTENTION": 2.0, "FLASH_ATTENTION": 1.0, "EFFICIENT_ATTENTION": 3.0,
                                     "MATH": 4.0}))
    bad = json.loads(json.dumps(doc))
    bad["policies"][0]["measured"]["components"] = ["torch"]
    with pytest.raises(attnsel.CatalogError, match="exact version"):
        attnsel.parse_catalog(json.dumps(bad))
    bad = json.loads(json.dumps(doc))
    bad["policies"][0]["measured"]["times"][0]["median_us"] = -1
    with pytest.raises(attnsel.CatalogError, match="median_us"):
        attnsel.parse_catalog(json.dumps(bad))
    bad = json.loads(json.dumps(doc))
    bad["policies"][0]["measured"]["times"][0]["backend"] = "NOT_A_BACKEND"
    reg = fresh_registry()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(attnsel.CatalogError, match="NOT_A_BACKEND"):
        reg.merge(str(path))
    bad = json.loads(json.dumps(doc))
    bad["version"] = 1
    with pytest.raises(attnsel.CatalogError, match="version 2"):
        attnsel.parse_catalog(json.dumps(bad))


def test_overlay_round_trips_through_the_catalog_writer(tmp_path):
    _, doc = overlay_for(FakeRunner({"CUDNN_ATTENTION": 2.0, "FLASH_ATTENTION": 1.0, "EFFICIENT_ATTENTION": 3.0,
                                     "MATH": 4.0}))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(attnsel.CatalogError, match="unknown backend"):
        attnsel.load_catalog(str(path))  # an overlay names the base's backends: it loads onto a base
    merged = fresh_registry()
    merged.merge(str(path))
    written = json.loads(attnsel.to_json(merged))
    measured = [r for r in written["policies"] if "measured" in r]
    assert [r["measured"] for r in measured] == [r["measured"] for r in doc["policies"]]
    assert written["version"] == 2


def test_a_backend_failing_while_timed_is_excluded_not_fatal():
    class OomRunner(FakeRunner):
        def time(self, w, c, backend, reps):
            if backend == "MATH":
                raise RuntimeError("CUDA out of memory. Tried to allocate 128.00 GiB\nmore text")
            return super().time(w, c, backend, reps)

    runner = OomRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0})
    w = llama(tune.decoder_classes([128], [], []))
    r = tune.measure(w, w.classes[0], fresh_registry(), H200, runner)
    assert r.excluded["MATH"] == "failed while timed: CUDA out of memory. Tried to allocate 128.00 GiB"
    assert "MATH" not in [t.backend for t in r.timings] and r.timings


def test_rules_name_the_head_size_so_two_workloads_do_not_collide(tmp_path):
    # Two encoders with the same heads, dtype and lengths but head sizes 64 and 80, and opposite winners.
    class ByHead(FakeRunner):
        def time(self, w, c, backend, reps):
            fast = "EFFICIENT_ATTENTION" if w.head_size == 64 else "CUDNN_ATTENTION"
            return [10.0 if backend == fast else 30.0 + len(backend)] * reps

    works = [tune.Workload("vit-d64", 16, 16, 64, 64, "bfloat16", tune.encoder_classes([256])),
             tune.Workload("vit-d80", 16, 16, 80, 80, "bfloat16", tune.encoder_classes([256]))]
    results = tune.tune(works, fresh_registry(), H200, ByHead({}, default="CUDNN_ATTENTION"))
    doc = tune.overlay(results)
    # d80's winner is the default (no rule): the d64 rule must not reach it.
    assert [r["head_sizes"] for r in doc["policies"]] == [[64]]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    reg = fresh_registry()
    reg.merge(str(path))
    rows = tune.regret_rows(results, tune.tuned_choice(reg, H200))
    assert [(r["workload"], r["tuned"], r["tuned_regret"]) for r in rows] == [
        ("vit-d64", "EFFICIENT_ATTENTION", 1.0), ("vit-d80", "CUDNN_ATTENTION", 1.0)]


def test_measurements_round_trip_and_replay_without_a_gpu():
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0, "MATH": 400.0},
                        wrong={"EFFICIENT_ATTENTION"})
    results = tune.tune([llama()], fresh_registry(), H200, runner)
    doc = json.loads(json.dumps(tune.to_json(results)))
    again = tune.from_json(doc)
    assert tune.overlay(again) == tune.overlay(results)
    assert again[0].results[0].excluded == results[0].results[0].excluded
    assert again[0].platform == H200
    with pytest.raises(ValueError, match="attnsel-tune-measurements"):
        tune.from_json({"format": "attnsel-catalog"})


def test_the_recorded_measurements_replay_to_the_committed_overlays(source_dir):
    # catalog/measured: what attnsel.tune measured on a GPU host, and the overlay written from it. Each
    # overlay is exactly what the writer makes of its measurements and loads on torch_sdpa; on the measured
    # platform every class it moves is one whose winner beat the default by more than the margin in both
    # passes, and every other class keeps the catalog's answer.
    measured = source_dir / "catalog" / "measured"
    pairs = sorted(measured.glob("*.measurements.json"))
    assert pairs
    for recorded in pairs:
        results = tune.from_json(json.loads(recorded.read_text()))
        overlay_path = recorded.with_name(recorded.name.replace(".measurements.json", ".json"))
        committed = json.loads(overlay_path.read_text())
        assert committed["policies"] == tune.overlay(results)["policies"], overlay_path.name
        reg = fresh_registry()
        reg.merge(str(overlay_path))
        platform = results[0].platform
        choose = tune.tuned_choice(reg, platform)
        for t in results:
            for r in t.results:
                picked = choose(t.workload, r.shape)
                base = attnsel.select(fresh_registry(), tune.query_of(t.workload, r.shape), platform).backend
                if r.decision is not None and r.decision.winner is not None:
                    assert picked == r.decision.winner
                    times = {x.backend: x for x in r.decision.confirm}
                    if base in times:
                        gain, margin = tune.gain_over(times[picked], times[base], tune.Method())
                        assert gain > margin, (t.workload.name, r.shape.name)
                    else:  # the default failed its check: the fastest that passed moved first
                        assert r.decision.why.startswith(f"the default {base} is excluded")
                elif picked != base:  # a rule of a span reaches it: the same fastest, not confirmed here
                    scope = next(s for s in tune.scopes(results) if (t.workload, r) in s.unconfirmed)
                    assert picked == scope.winner == r.fastest.backend, (t.workload.name, r.shape.name)
        # Elsewhere the overlay is stale: another device gets torch_sdpa's own answers.
        other = platform.with_device_name("NVIDIA H100 80GB HBM3" if "H200" in platform.device_name else "NVIDIA H200")
        w = results[0].workload
        q = tune.query_of(w, w.classes[0])
        assert attnsel.select(reg, q, other).backend == attnsel.select(fresh_registry(), q, other).backend


def test_torch_choice_outside_the_catalog_is_recorded_not_forced():
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "MATH": 400.0},
                        default="error: No available kernel")
    w = llama(tune.decoder_classes([128], [], []))
    r = tune.measure(w, w.classes[0], fresh_registry(), H200, runner)
    assert "not a backend of the catalog" in r.excluded["error: No available kernel"]
    assert all(name != "error: No available kernel" for _, name in runner.timed)


def test_a_platform_without_a_device_name_cannot_be_fingerprinted():
    with pytest.raises(ValueError, match="no device name"):
        tune.check_platform(H200.with_device_name(None))
    with pytest.raises(ValueError, match="CUDA"):
        tune.check_platform(attnsel.Platform.cpu())
    tune.check_platform(H200)


def test_main_from_json_rewrites_overlay_and_report_and_refuses_bad_files(tmp_path, capsys):
    runner = FakeRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0, "MATH": 400.0})
    results = tune.tune([llama()], fresh_registry(), H200, runner)
    rec = tmp_path / "rec.json"
    rec.write_text(json.dumps(tune.to_json(results)))
    out, rep = tmp_path / "o.json", tmp_path / "r.md"
    assert tune.main(["--from-json", str(rec), "--out", str(out), "--report", str(rep)]) == 0
    assert json.loads(out.read_text())["policies"] == tune.overlay(results)["policies"]
    assert "Geometric-mean regret" in rep.read_text()
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({**tune.to_json(results), "workloads": []}))
    for bad, why in ((empty, "no workloads"), (tmp_path / "missing.json", "No such file"),
                     (out, "attnsel-tune-measurements")):
        with pytest.raises(SystemExit):
            tune.main(["--from-json", str(bad), "--out", str(tmp_path / "x.json")])
        assert why in capsys.readouterr().err


# ---- soundness: interleaving, the spread limit, the margin and the second pass -----------------------

def one_class():
    return llama(tune.decoder_classes([128], [], []))


def decide(runner, method=tune.Method()):
    results = tune.tune([one_class()], fresh_registry(), H200, runner, method=method)
    return results, results[0].results[0]


def test_backends_are_timed_interleaved_each_round_starting_at_the_next():
    runner = ScriptedRunner(lambda b, n, i: 10.0)
    _, r = decide(runner, tune.Method(rounds=4, reps=2))
    timed = [t.backend for t in r.timings]
    first_pass = runner.calls[:4 * len(timed)]
    rounds = [first_pass[k * len(timed):(k + 1) * len(timed)] for k in range(4)]
    assert all(sorted(rnd) == sorted(timed) for rnd in rounds)  # every backend once a round
    assert len({rnd[0] for rnd in rounds}) == min(4, len(timed))  # no backend always runs first
    assert all(t.reps == 8 for t in r.timings)


def test_equal_backends_under_drift_are_not_told_apart():
    # The machine slows by 1% every call. Timed in blocks, whichever backend ran first would look
    # faster; interleaved, every backend sees the same drift and the default is kept.
    runner = ScriptedRunner(lambda b, n, i: 100.0 * (1.0 + 0.01 * n))
    _, r = decide(runner, tune.Method(spread_limit_pct=50.0))
    assert r.decision.winner is None
    assert "within the" in r.decision.why or "is the fastest" in r.decision.why


def test_a_noisy_class_is_measured_again_then_keeps_the_default():
    runner = ScriptedRunner(lambda b, n, i: 20.0 * (1.0 + 0.5 * (i % 2)) if b == "FLASH_ATTENTION" else 30.0)
    results, r = decide(runner, tune.Method(retries=2))
    assert r.attempts == 3
    assert r.decision.winner is None and r.decision.why.startswith("too noisy: FLASH_ATTENTION spread")
    assert "over the 10% limit after 3 measurement(s)" in r.decision.why
    assert tune.overlay(results)["policies"] == []
    assert "llama3-8b prefill 128: too noisy" in tune.report(results, tune.regret_rows(results, lambda w, c: "CUDNN_ATTENTION"))


def test_a_noisy_class_with_a_gain_beyond_twice_the_spread_is_confirmed():
    # FLASH spreads 15% (over the 10% limit) in every pass, yet runs in about a third of cuDNN's time.
    runner = ScriptedRunner(lambda b, n, i: 10.0 * (1.0 + 0.15 * (i % 2)) if b == "FLASH_ATTENTION" else 30.0)
    results, r = decide(runner, tune.Method(retries=1))
    assert r.attempts == 2
    assert r.decision.winner == "FLASH_ATTENTION" and r.decision.why.startswith("confirmed: first pass")
    assert "(margin 27.9%)" in r.decision.why  # twice the spread: 1.5 over a median of 10.75
    assert len(runner.calls) == 2 * 3 * 5 + 2 * (2 * 8)  # two first passes of 3 backends, two noisy second passes
    assert tune.overlay(results)["policies"][0]["order"][0] == "FLASH_ATTENTION"


def test_a_noisy_second_pass_is_measured_again():
    # Steady in the first pass; the second pass is noisy once, then steady: it is measured again.
    def fn(b, n, i):
        noisy = 15 < n <= 31
        return (20.0 if b == "FLASH_ATTENTION" else 30.0) * (1.0 + (0.6 * (i % 2) if noisy else 0.0))

    runner = ScriptedRunner(fn)
    _, r = decide(runner)
    assert r.decision.winner == "FLASH_ATTENTION" and r.decision.confirm
    assert all(t.spread_pct == 0.0 for t in r.decision.confirm)
    assert len(runner.calls) == 3 * 5 + 2 * (2 * 8)


def test_noise_that_settles_is_measured_again_and_decided():
    # Noisy while the first measurement lasts (3 rounds of the 3 backends the catalog runs), steady after.
    runner = ScriptedRunner(lambda b, n, i: (20.0 if b == "FLASH_ATTENTION" else 30.0) * (1.0 + (0.5 * (i % 2) if n <= 9 else 0)))
    _, r = decide(runner, tune.Method(rounds=3, reps=2))
    assert len(r.timings) == 3 and r.attempts == 2
    assert r.decision.winner == "FLASH_ATTENTION" and r.decision.why.startswith("confirmed")


def test_a_gain_within_the_margin_keeps_the_default():
    runner = ScriptedRunner(lambda b, n, i: 29.4 if b == "FLASH_ATTENTION" else 30.0)  # 2% faster
    results, r = decide(runner)
    assert r.decision.winner is None
    assert r.decision.why == "FLASH_ATTENTION is 2.0% faster than the default CUDNN_ATTENTION, within the 3.0% margin"
    assert tune.overlay(results)["policies"] == []


def test_a_winner_the_second_pass_does_not_confirm_is_not_written():
    first_pass = {"calls": None}

    def fn(b, n, i):
        # FLASH looks 30% faster in the first pass only; the second pass (after every class) finds them equal.
        if first_pass["calls"] is None or n <= first_pass["calls"]:
            return 20.0 if b == "FLASH_ATTENTION" else 26.0
        return 26.0

    runner = ScriptedRunner(fn)
    w = one_class()
    r = tune.measure(w, w.classes[0], fresh_registry(), H200, runner)
    first_pass["calls"] = len(runner.calls)
    d = tune.confirm(w, r, runner, tune.Method())
    assert d.winner is None and d.why.startswith("not confirmed: first pass 30.0% faster, second pass FLASH_ATTENTION")
    assert [t.backend for t in d.confirm] and set(t.backend for t in d.confirm) == {"FLASH_ATTENTION", "CUDNN_ATTENTION"}
    assert runner.calls[first_pass["calls"]:].count("FLASH_ATTENTION") == tune.Method().confirm_rounds


def test_a_confirmed_rule_moves_only_the_winner_and_records_the_second_pass():
    runner = ScriptedRunner(lambda b, n, i: {"FLASH_ATTENTION": 20.0, "CUDNN_ATTENTION": 30.0}.get(b, 90.0))
    results, r = decide(runner)
    rule = tune.overlay(results)["policies"][0]
    assert rule["order"] == ["FLASH_ATTENTION"] + [b for b in r.order if b != "FLASH_ATTENTION"]
    assert [t["backend"] for t in rule["measured"]["times"]] == ["FLASH_ATTENTION", "CUDNN_ATTENTION"]
    doc = json.loads(json.dumps(tune.to_json(results)))
    assert doc["version"] == 2
    again = tune.from_json(doc)
    assert again[0].results[0].decision == r.decision and tune.overlay(again) == tune.overlay(results)
    # A recorded winner its own second pass contradicts is refused.
    decision = doc["workloads"][0]["results"][0]["decision"]
    decision["confirm"][0]["median_us"], decision["confirm"][1]["median_us"] = 40.0, 30.0
    with pytest.raises(tune.MeasurementError, match="decision/winner: FLASH_ATTENTION is slower than CUDNN_ATTENTION"):
        tune.from_json(doc)


def test_a_version_1_file_has_no_second_pass_and_writes_no_rule():
    runner = ScriptedRunner(lambda b, n, i: {"FLASH_ATTENTION": 20.0, "CUDNN_ATTENTION": 30.0}.get(b, 90.0))
    results, _ = decide(runner)
    doc = json.loads(json.dumps(tune.to_json(results)))
    doc["version"] = 1
    for r in doc["workloads"][0]["results"]:
        for key in ("decision", "default", "order", "attempts"):
            del r[key]
    old = tune.from_json(doc)
    assert old[0].results[0].decision is None and tune.overlay(old)["policies"] == []
    text = tune.report(old, tune.regret_rows(old, lambda w, c: "CUDNN_ATTENTION"))
    assert "1 classes were measured once and not decided" in text


def test_verify_reports_the_tuned_choice_against_torchs_default(tmp_path):
    runner = ScriptedRunner(lambda b, n, i: {"FLASH_ATTENTION": 20.0, "CUDNN_ATTENTION": 30.0}.get(b, 90.0))
    results, _ = decide(runner)
    path = tmp_path / "o.json"
    path.write_text(json.dumps(tune.overlay(results)))
    report = tmp_path / "verify.md"
    args = type("Args", (), {"budget": 600.0, "report": str(report), "json": None})()
    errors = []
    assert tune.verify([one_class()], str(path), H200, runner, args, tune.Method(), "cmd", errors.append) == 0
    text = report.read_text()
    assert "Tuned time over torch default's: worst 0.667x (llama3-8b prefill 128)" in text
    assert "1 classes were measured once and not decided" in text
    tune.verify([one_class()], str(tmp_path / "missing.json"), H200, runner, args, tune.Method(), "cmd",
                errors.append)
    assert errors and errors[0].startswith("--verify: ")


@pytest.mark.parametrize("argv, message", [
    (["--preset", "vit"], "--out is required (unless --verify)"),
    (["--preset", "vit", "--out", "o.json", "--rounds", "0"], "'0' is not an integer in [1, 1000]"),
    (["--preset", "vit", "--out", "o.json", "--spread-limit", "nan"], "'nan' is not a percentage"),
    (["--verify", "o.json", "--from-json", "m.json"], "does not take --from-json"),
])
def test_the_method_flags_are_checked(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        tune.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_a_default_with_wrong_output_gives_way_to_the_fastest_backend_that_passed():
    class WrongDefault(ScriptedRunner):
        def check(self, w, c, backend):
            return "wrong output: max abs error 0.5" if backend == "CUDNN_ATTENTION" else None

    runner = WrongDefault(lambda b, n, i: {"FLASH_ATTENTION": 20.0, "CUDNN_ATTENTION": 10.0}.get(b, 90.0))
    results, r = decide(runner)
    assert r.decision.winner == "FLASH_ATTENTION"
    assert r.decision.why.startswith("the default CUDNN_ATTENTION is excluded (wrong output")
    rule = tune.overlay(results)["policies"][0]
    assert rule["order"][0] == "FLASH_ATTENTION" and "CUDNN_ATTENTION" not in rule["order"]
    assert tune.from_json(json.loads(json.dumps(tune.to_json(results))))[0].results[0].decision == r.decision


class ByWorkload(FakeRunner):
    """The backend each workload's calls run fastest on (name -> backend); every other backend 40 us."""

    def __init__(self, fastest, default="FLASH_ATTENTION", gain=0.5):
        super().__init__({}, default=default)
        self.fastest, self.gain = fastest, gain

    def time(self, w, c, backend, reps):
        return [40.0 * (1 - self.gain) if backend == self.fastest.get(w.name) else 40.0] * reps


def decoders(*heads):
    """One decoder workload per (name, head size, heads, KV heads), over the same two classes."""
    classes = tune.decoder_classes([2048], [64], [4096])
    return [tune.Workload(n, h, kv, d, d, "bfloat16", classes) for n, d, h, kv in heads]


DEPRIORITIZED = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "torch=2.11.0"])
                 .with_device_name("NVIDIA H200"))


def merged(doc, tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    reg = fresh_registry()
    reg.merge(str(path))
    return reg


def test_a_rule_spans_the_head_sizes_whose_workloads_agree_and_reaches_other_head_counts(tmp_path):
    works = decoders(("a", 64, 32, 32), ("b", 128, 32, 8), ("c", 256, 8, 4))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED,
                        ByWorkload({"a": "CUDNN_ATTENTION", "b": "CUDNN_ATTENTION", "c": "CUDNN_ATTENTION"}))
    doc = tune.overlay(results)
    assert len(doc["policies"]) == 2  # one rule per class, not one per workload and class
    for rule in doc["policies"]:
        assert rule["head_sizes"] == list(range(64, 257, 8))
        assert not {"min_num_heads", "max_num_heads", "gqa_group", "features"} & set(rule)
        assert "on a (d64, 32/32 heads, bfloat16), b (d128, 32/8 heads, bfloat16), c (d256" in rule["note"]
        assert "head sizes 64 to 256 (multiples of 8), any head count" in rule["note"]
        # The times are the geometric means of the second passes: the winner first, as the order.
        assert [t["backend"] for t in rule["measured"]["times"]] == ["CUDNN_ATTENTION", "FLASH_ATTENTION"]
    reg = merged(doc, tmp_path)
    # Another model's layer inside the span (d96, 40/8 heads) gets the rule; one outside it does not.
    other = tune.Workload("other", 40, 8, 96, 96, "bfloat16", results[0].workload.classes)
    odd = tune.Workload("odd", 40, 8, 100, 100, "bfloat16", results[0].workload.classes)
    choose = tune.tuned_choice(reg, DEPRIORITIZED)
    text = tune.report(results, tune.regret_rows(results, choose))
    assert "- prefill 2048, d64 to d256, bfloat16: CUDNN_ATTENTION before FLASH_ATTENTION; confirmed on a, b, c" in text
    for c in other.classes:
        assert choose(other, c) == "CUDNN_ATTENTION"
        assert choose(odd, c) == attnsel.select(fresh_registry(), tune.query_of(odd, c), DEPRIORITIZED).backend


def test_a_head_size_whose_default_is_fastest_breaks_the_span(tmp_path):
    works = decoders(("a", 64, 32, 32), ("b", 128, 32, 8), ("c", 256, 8, 4))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED,
                        ByWorkload({"a": "CUDNN_ATTENTION", "c": "CUDNN_ATTENTION"}))
    doc = tune.overlay(results)
    assert sorted(r["head_sizes"] for r in doc["policies"]) == [[64], [64], [256], [256]]
    choose = tune.tuned_choice(merged(doc, tmp_path), DEPRIORITIZED)
    b = results[1].workload
    assert all(choose(b, c) == "FLASH_ATTENTION" for c in b.classes)


def test_workloads_of_one_head_size_that_disagree_get_rules_of_their_own_head_counts(tmp_path):
    works = decoders(("a", 128, 32, 8), ("b", 128, 8, 1))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED, ByWorkload({"a": "CUDNN_ATTENTION"}))
    doc = tune.overlay(results)
    assert len(doc["policies"]) == 2
    for rule in doc["policies"]:
        assert (rule["head_sizes"], rule["min_num_heads"], rule["gqa_group"]) == ([128], 32, {"min": 4, "max": 4})
    choose = tune.tuned_choice(merged(doc, tmp_path), DEPRIORITIZED)
    a, b = (t.workload for t in results)
    assert [choose(a, c) for c in a.classes] == ["CUDNN_ATTENTION"] * 2
    assert [choose(b, c) for c in b.classes] == ["FLASH_ATTENTION"] * 2


@pytest.mark.parametrize("weak, span, listed", [("b", range(64, 257, 8), ["b"]), ("c", range(64, 129, 8), [])])
def test_an_unconfirmed_workload_with_the_same_fastest_joins_the_span_without_counting_as_evidence(weak, span,
                                                                                                   listed):
    # The weak workload's cuDNN is 2 % faster, within the 3 % margin: not confirmed, the same fastest. Inside
    # the span (b, d128) it is covered and named; at its end (c, d256) the span stops at the confirmed d128.
    works = decoders(("a", 64, 32, 32), ("b", 128, 32, 8), ("c", 256, 8, 4))
    runner = ByWorkload({"a": "CUDNN_ATTENTION", "b": "CUDNN_ATTENTION", "c": "CUDNN_ATTENTION"})
    strong = runner.time

    def time(w, c, backend, reps):
        if w.name == weak and backend == "CUDNN_ATTENTION":
            return [40.0 * 0.98] * reps
        return strong(w, c, backend, reps)

    runner.time = time
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED, runner)
    assert all(r.decision.winner is None for t in results if t.workload.name == weak for r in t.results)
    found = tune.scopes(results)
    assert [s.head_sizes for s in found] == [tuple(span)] * 2
    assert all([w.name for w, _ in s.unconfirmed] == listed and len(s.confirmed) == 2 for s in found)
    doc = tune.overlay(results)
    assert all(("the same fastest, unconfirmed, on b (d128" in r["note"]) == bool(listed) for r in doc["policies"])


def test_a_prefill_rule_and_an_encoder_rule_of_one_shape_keep_to_their_own_calls(tmp_path):
    # Causal prefill and non-causal encoder calls of 2048 tokens, the same heads: opposite winners.
    class ByCausal(FakeRunner):
        def time(self, w, c, backend, reps):
            fast = "CUDNN_ATTENTION" if c.causal else "EFFICIENT_ATTENTION"
            return [20.0 if backend == fast else 40.0] * reps

    works = [tune.Workload("dec", 16, 16, 64, 64, "bfloat16", tune.decoder_classes([2048], [], [])),
             tune.Workload("enc", 16, 16, 64, 64, "bfloat16", tune.encoder_classes([2048]))]
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED, ByCausal({}, default="FLASH_ATTENTION"))
    doc = tune.overlay(results)
    assert sorted(r["attn_types"] for r in doc["policies"]) == [["decoder"], ["encoder_only"]]
    choose = tune.tuned_choice(merged(doc, tmp_path), DEPRIORITIZED)
    (dec, enc) = (t.workload for t in results)
    assert choose(dec, dec.classes[0]) == "CUDNN_ATTENTION"
    assert choose(enc, enc.classes[0]) == "EFFICIENT_ATTENTION"


def test_workloads_with_another_default_break_the_span():
    works = decoders(("a", 64, 32, 32), ("b", 128, 32, 8))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED,
                        ByWorkload({"a": "CUDNN_ATTENTION", "b": "CUDNN_ATTENTION"}))
    for r in results[1].results:  # as if b's default were another backend
        r.default = "EFFICIENT_ATTENTION"
    assert sorted(s.head_sizes for s in tune.scopes(results)) == [(64,), (64,), (128,), (128,)]


def test_an_unconfirmed_workload_whose_second_pass_times_the_default_faster_breaks_the_span():
    works = decoders(("a", 64, 32, 32), ("b", 128, 32, 8), ("c", 256, 8, 4))
    runner = ByWorkload({"a": "CUDNN_ATTENTION", "c": "CUDNN_ATTENTION"})
    strong = runner.time
    runner.time = lambda w, c, backend, reps: ([40.0 * 0.98] * reps if w.name == "b" and backend == "CUDNN_ATTENTION"
                                               else strong(w, c, backend, reps))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED, runner)
    # b's first pass had cuDNN 2 % ahead (unconfirmed, the same fastest): it joins the span ...
    assert [s.head_sizes for s in tune.scopes(results)] == [tuple(range(64, 257, 8))] * 2
    # ... unless a second pass timed cuDNN no faster than the default: then it breaks it.
    for r in results[1].results:
        r.decision = tune.Decision(None, "not confirmed", [tune.Timing("CUDNN_ATTENTION", 41.0, 1.0, 4),
                                                           tune.Timing("FLASH_ATTENTION", 40.0, 1.0, 4)])
    assert sorted(s.head_sizes for s in tune.scopes(results)) == [(64,), (64,), (256,), (256,)]


def test_a_scope_without_second_pass_times_is_refused_with_the_reason():
    works = decoders(("a", 64, 32, 32))
    results = tune.tune(works, fresh_registry(), DEPRIORITIZED, ByWorkload({"a": "CUDNN_ATTENTION"}))
    scope = tune.scopes(results)[0]
    scope.confirmed[0][1].decision.confirm = []
    with pytest.raises(ValueError, match="needs its winner CUDNN_ATTENTION's second-pass time"):
        tune.rule_of(scope, DEPRIORITIZED)
    with pytest.raises(ValueError, match="no confirmed workload"):
        tune.rule_of(tune.Scope("CUDNN_ATTENTION", "FLASH_ATTENTION", ()), DEPRIORITIZED)
