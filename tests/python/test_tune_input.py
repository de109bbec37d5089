# SPDX-License-Identifier: Apache-2.0
# attnsel.tune's trust in its own output: ranking by time whatever the file order, every measured value
# checked before any file is written (exit 1 for data, no traceback, --out left as it was), atomic
# writes that concurrent writers cannot interleave, the command quoted, MLA configs refused.
import json
import os
import shlex
import threading

import pytest

import attnsel
from attnsel import tune

H200 = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0"])
        .with_device_name("NVIDIA H200"))


class TableRunner(tune.Runner):
    def __init__(self, times):
        self.times = times

    def torch_default(self, w, c):
        return "CUDNN_ATTENTION"

    def check(self, w, c, backend):
        return None

    def time(self, w, c, backend, reps):
        return [self.times[backend]] * reps


def recorded():
    w = tune.Workload("llama3-8b", 32, 8, 128, 128, "bfloat16", tune.decoder_classes([128], [], []))
    results = tune.tune([w], attnsel.torch_sdpa_registry(), H200,
                        TableRunner({"CUDNN_ATTENTION": 30.0, "FLASH_ATTENTION": 20.0, "EFFICIENT_ATTENTION": 40.0,
                                     "MATH": 400.0}))
    return json.loads(json.dumps(tune.to_json(results)))


def test_from_json_ranks_by_time_not_by_file_order(tmp_path):
    doc = recorded()
    timings = doc["workloads"][0]["results"][0]["timings"]
    timings.reverse()  # slowest first in the file
    assert timings[0]["backend"] == "MATH"
    fastest_first = [t["backend"] for t in sorted(timings, key=lambda t: t["median_us"])]
    assert fastest_first[0] == "FLASH_ATTENTION" and fastest_first[-1] == "MATH" and len(fastest_first) >= 3
    results = tune.from_json(doc)
    assert [t.backend for t in results[0].results[0].timings] == fastest_first
    rule = tune.overlay(results)["policies"][0]
    # The confirmed winner first, then the catalog's own order (cuDNN first on the H200).
    assert rule["order"] == ["FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "MATH"]
    assert "FLASH_ATTENTION before the default CUDNN_ATTENTION, confirmed: first pass 50.0% faster" in rule["note"]
    rec, out = tmp_path / "rec.json", tmp_path / "out.json"
    rec.write_text(json.dumps(doc))
    assert tune.main(["--from-json", str(rec), "--out", str(out), "--report", str(tmp_path / "r.md")]) == 0
    assert json.loads(out.read_text())["policies"][0]["order"][0] == "FLASH_ATTENTION"


def timing(doc, key, value):
    doc["workloads"][0]["results"][0]["timings"][0][key] = value


BAD = {
    "NaN time": (lambda d: timing(d, "median_us", float("nan")), "timings/0/median_us: expected a finite number > 0"),
    "infinite time": (lambda d: timing(d, "median_us", float("inf")), "timings/0/median_us"),
    "zero time": (lambda d: timing(d, "median_us", 0), "timings/0/median_us: expected a finite number > 0, got 0"),
    "negative time": (lambda d: timing(d, "median_us", -3.5), "got -3.5"),
    "string time": (lambda d: timing(d, "median_us", "12"), "got '12'"),
    "NaN spread": (lambda d: timing(d, "spread_pct", float("nan")), "timings/0/spread_pct"),
    "timed twice": (lambda d: timing(d, "backend", d["workloads"][0]["results"][0]["timings"][1]["backend"]),
                    "timings/1/backend: CUDNN_ATTENTION is timed twice"),
    "unknown backend": (lambda d: timing(d, "backend", "FLASH_ATTN"), "'FLASH_ATTN' is not a backend of the catalog tuned on"),
    "empty range": (lambda d: d["workloads"][0]["results"][0]["shape"].update(seq_q_range=[300, 200]),
                    "results/0/shape/seq_q_range: the range [300, 200] is empty"),
    "range past the limit": (lambda d: d["workloads"][0]["classes"][0].update(seq_q_range=[2, 1 << 40]),
                             "classes/0/seq_q_range/1: expected an integer in [1, 1073741824]"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_measurements_are_refused_before_anything_is_written(tmp_path, capsys, name):
    change, why = BAD[name]
    doc = recorded()
    timings = doc["workloads"][0]["results"][0]["timings"]
    timings.sort(key=lambda t: t["median_us"])  # the refusal must name the field as the file lists it
    change(doc)
    rec = tmp_path / "rec.json"
    rec.write_text(json.dumps(doc))  # Python's json writes NaN / Infinity, as a hand-edited file may hold
    out, rep = tmp_path / "working.json", tmp_path / "report.md"
    out.write_text("the working overlay\n")
    with pytest.raises(SystemExit) as e:
        tune.main(["--from-json", str(rec), "--out", str(out), "--report", str(rep)])
    assert e.value.code == 1  # bad data, not a usage error
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err
    assert "/workloads/0/" in err or "/workloads" in why
    assert out.read_text() == "the working overlay\n" and not rep.exists()
    assert sorted(os.listdir(tmp_path)) == ["rec.json", "working.json"]  # no temporary file left behind
    with pytest.raises(ValueError, match="workloads"):
        tune.from_json(doc)


def test_a_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        tune.main(["--out", "x.json"])
    assert e.value.code == 2
    assert "give --preset" in capsys.readouterr().err


def test_concurrent_writers_each_replace_the_whole_file(tmp_path):
    path = tmp_path / "measured.json"
    bodies = [(chr(ord("a") + k) * 200_000) + "\n" for k in range(8)]
    threads = [threading.Thread(target=tune.write_atomic, args=(str(path), b)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert path.read_text() in bodies  # one writer's whole text, never a mix
    assert os.listdir(tmp_path) == ["measured.json"]


def test_the_command_line_is_recorded_quoted(tmp_path):
    rec = tmp_path / "my measurements.json"
    rec.write_text(json.dumps(recorded()))
    out, rep = tmp_path / "o.json", tmp_path / "r.md"
    argv = ["--from-json", str(rec), "--out", str(out), "--report", str(rep)]
    assert tune.main(argv) == 0
    command = shlex.join(["python", "-m", "attnsel.tune", *argv])
    assert json.loads(out.read_text())["source"] == command
    assert shlex.split(command)[4] == str(rec)  # the re-run block runs again as written
    assert "```\n" + command + "\n```" in rep.read_text()


def test_an_mla_model_config_is_refused_with_its_reason(source_dir, capsys):
    config = str(source_dir / "tests" / "data" / "model_configs" / "deepseek-v3.json")
    with pytest.raises(SystemExit) as e:
        tune.main(["--model-config", config, "--out", "x.json"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "is an MLA model (mode mla)" in err and "576" in err
    with pytest.raises(SystemExit):
        tune.main(["--model-config", "", "--out", "x.json"])
    assert "the path is empty" in capsys.readouterr().err
