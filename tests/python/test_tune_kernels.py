# SPDX-License-Identifier: Apache-2.0
# attnsel.tune with kernels beyond SDPA's, without torch: an engine's own backend described by a catalog
# overlay is timed beside the base catalog's, its rule carries the descriptor so the overlay loads on the
# base alone, its component's version joins the fingerprint, and bad input (a backend the catalog lacks,
# a component without a version, an overlay from another device or naming an untimed backend) is refused
# before anything is measured or written.
import json

import pytest

import attnsel
from attnsel import tune
from runners import ScriptedRunner

H100 = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0", "mykernels=1.2"])
        .with_device_name("NVIDIA H100 80GB HBM3"))

# An engine's own kernel, described as a catalog overlay describes one: in no policy order, so it is
# reached by an override or a measured rule only.
MINE = {"format": "attnsel-catalog", "version": 2, "name": "mine", "description": "an engine's kernel",
        "source": "test", "policies": [],
        "backends": [{"name": "MY_KERNEL", "description": "the engine's own", "domains": ["decoder", "encoder"],
                      "attn_types": ["decoder", "encoder_only"], "dtypes": ["float16", "bfloat16"],
                      "head_sizes": {"min": 64, "max": 128}, "features": ["gqa"],
                      "platforms": [{"vendor": "cuda", "min_capability": "8.0"}],
                      "requires": [{"component": "mykernels"}]}]}


def registry():
    reg = attnsel.torch_sdpa_registry()
    reg.merge(attnsel.parse_catalog(json.dumps(MINE)))
    return reg


class Kernels(ScriptedRunner):
    """Times from a table by backend name; only the backends in the table have a kernel."""

    def __init__(self, us, components=("mykernels",), baseline="CUDNN_ATTENTION"):
        super().__init__(lambda backend, n, i: us[backend], default=baseline)
        self.us, self.components = us, components

    def validate(self, reg):
        unknown = [b for b in self.us if b not in reg]
        if unknown:
            raise ValueError(f"kernels for {', '.join(unknown)}: not backends of the catalog")

    def has(self, backend):
        return backend in self.us


def workload(prefill=(512,)):
    return tune.Workload("llama3-8b", 32, 8, 128, 128, "bfloat16", tune.decoder_classes(list(prefill), [], []))


def run(runner, reg=None):
    return tune.tune([workload()], reg or registry(), H100, runner, kernels_catalog=MINE)


def test_an_engine_kernel_is_timed_beside_sdpas_and_its_rule_carries_its_descriptor(tmp_path):
    runner = Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0, "FLASH_ATTENTION": 25.0})
    results = run(runner)
    r = results[0].results[0]
    assert r.decision.winner == "MY_KERNEL" and "MY_KERNEL" in runner.calls
    # SDPA's backends without a kernel here are listed, never timed
    assert r.excluded["MATH"].startswith("no kernel given to the runner")
    assert "MATH" not in runner.calls
    doc = tune.overlay(results)
    assert [b["name"] for b in doc["backends"]] == ["MY_KERNEL"]
    rule = doc["policies"][0]
    assert rule["order"][0] == "MY_KERNEL" and "mykernels=1.2" in rule["measured"]["components"]
    path = tmp_path / "o.json"
    path.write_text(json.dumps(doc))
    base = attnsel.torch_sdpa_registry()  # the overlay loads on the base catalog alone
    base.merge(str(path))
    q = tune.query_of(results[0].workload, r.shape)
    assert attnsel.select(base, q, H100).backend == "MY_KERNEL"
    # another version of the engine's kernels: the rule is stale, the catalog's order answers
    other = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0",
                                                     "mykernels=1.3"]).with_device_name("NVIDIA H100 80GB HBM3"))
    assert attnsel.select(base, q, other).backend == "CUDNN_ATTENTION"


def test_an_overlay_without_an_engine_winner_carries_no_descriptor():
    results = run(Kernels({"MY_KERNEL": 40.0, "CUDNN_ATTENTION": 20.0}))
    assert results[0].results[0].decision.winner is None
    assert tune.overlay(results)["backends"] == []


def test_the_measurements_keep_the_kernels_catalog_and_components():
    results = run(Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}))
    doc = json.loads(json.dumps(tune.to_json(results)))
    assert doc["components"] == ["mykernels"] and doc["kernels_catalog"]["name"] == "mine"
    back = tune.from_json(doc)
    assert back[0].components == ("mykernels",) and back[0].kernels_catalog == MINE
    assert tune.overlay(back) == tune.overlay(results)


@pytest.mark.parametrize("change, where", [
    (lambda d: d["kernels_catalog"]["backends"][0].update(dtypes=["float8"]), "/kernels_catalog"),
    (lambda d: d.update(kernels_catalog=[]), "/kernels_catalog"),
    (lambda d: d.update(components=["flashinfer"]), "/components/0"),
    (lambda d: d.pop("kernels_catalog"), "'MY_KERNEL' is not a backend of the catalog tuned on"),
])
def test_bad_kernel_records_are_refused(change, where):
    doc = json.loads(json.dumps(tune.to_json(run(Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0})))))
    change(doc)
    with pytest.raises(tune.MeasurementError, match=where.replace("[", r"\[")):
        tune.from_json(doc)


def test_a_kernel_the_catalog_lacks_is_refused_before_anything_is_measured():
    runner = Kernels({"NOT_A_BACKEND": 1.0, "CUDNN_ATTENTION": 20.0})
    with pytest.raises(ValueError, match="NOT_A_BACKEND"):
        run(runner)
    assert runner.calls == []


def test_kernels_from_a_component_without_a_version_are_refused():
    runner = Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}, components=("flashinfer",))
    with pytest.raises(ValueError, match="flashinfer, which the platform does not state"):
        run(runner)
    assert runner.calls == []


def test_a_class_no_backend_supports_without_a_baseline_is_skipped_with_its_reason():
    runner = Kernels({"MY_KERNEL": 10.0}, baseline="")
    only_mine = attnsel.parse_catalog(json.dumps(MINE))
    d256 = tune.Workload("gemma", 16, 8, 256, 256, "bfloat16", tune.decoder_classes([512], [], []))  # over its 128
    results = tune.tune([d256], only_mine, H100, runner, kernels_catalog=MINE)
    assert results[0].results == []
    assert results[0].skipped == [("prefill 512", "not measured: no backend of the catalog supports the call, "
                                                  "and the runner names no baseline")]


class Args:
    budget, report, json = 600.0, None, None

    def __init__(self, report):
        self.report = report


def write_overlay(tmp_path, runner):
    path = tmp_path / "o.json"
    path.write_text(json.dumps(tune.overlay(run(runner))))
    return path


def test_verify_refuses_an_overlay_measured_on_another_device(tmp_path):
    path = write_overlay(tmp_path, Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}))
    h200 = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0",
                                                    "mykernels=1.2"]).with_device_name("NVIDIA H200"))
    doc = json.loads(path.read_text())
    assert tune.stale_rules(doc, H100) == []
    assert tune.stale_rules(doc, h200) == ["rule 0: device NVIDIA H200 (measured on NVIDIA H100 80GB HBM3)"]
    errors, runner = [], Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0})
    assert tune.verify([workload()], str(path), h200, runner, Args(str(tmp_path / "r.md")), tune.Method(), "cmd",
                       errors.append, registry()) == 1
    assert "none of its 1 measured rules holds on this machine (rule 0: device NVIDIA H200 (measured on NVIDIA H100" in errors[0]
    assert runner.calls == [] and not (tmp_path / "r.md").exists()


def test_stale_rules_compare_versions_as_the_catalog_does():
    doc = {"policies": [{"measured": {"components": ["cudnn=9.19.0", "torch=2.11"]}}]}
    same = attnsel.Platform.cuda(9, 0, components=["cudnn=9.19", "torch=2.11.0"])
    assert tune.stale_rules(doc, same) == []
    newer = attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.1", "torch=2.11.0"])
    assert tune.stale_rules(doc, newer) == ["rule 0: cudnn=9.19.1 (measured with cudnn=9.19.0)"]


def test_verify_ignores_an_untimed_winner_of_a_rule_that_does_not_hold_here(tmp_path):
    path = write_overlay(tmp_path, Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}))
    doc = json.loads(path.read_text())
    held = json.loads(json.dumps(doc["policies"][0]))
    held["order"] = ["FLASH_ATTENTION", "CUDNN_ATTENTION"]
    doc["policies"][0]["measured"]["device"] = "NVIDIA H200"  # MY_KERNEL's rule is from another device
    doc["policies"].append(held)
    path.write_text(json.dumps(doc))
    errors, report = [], tmp_path / "r.md"
    runner = Kernels({"CUDNN_ATTENTION": 20.0, "FLASH_ATTENTION": 15.0})
    assert tune.verify([workload()], str(path), H100, runner, Args(str(report)), tune.Method(), "cmd",
                       errors.append, registry()) == 0
    assert errors == [] and report.exists()


def test_verify_refuses_an_overlay_whose_winner_has_no_kernel_here(tmp_path):
    path = write_overlay(tmp_path, Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}))
    errors, runner = [], Kernels({"CUDNN_ATTENTION": 20.0})
    assert tune.verify([workload()], str(path), H100, runner, Args(str(tmp_path / "r.md")), tune.Method(), "cmd",
                       errors.append, registry()) == 1
    assert "put MY_KERNEL first, which this run has no kernel for" in errors[0] and runner.calls == []


def test_verify_re_times_an_engine_kernel_overlay(tmp_path):
    path = write_overlay(tmp_path, Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}))
    report = tmp_path / "r.md"
    errors = []
    assert tune.verify([workload()], str(path), H100, Kernels({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0}),
                       Args(str(report)), tune.Method(), "cmd", errors.append, registry()) == 0
    assert not errors and "Tuned time over torch default's: worst 0.500x" in report.read_text()


def test_the_families_flag_is_checked(capsys):
    with pytest.raises(SystemExit) as e:
        tune.main(["--preset", "vit", "--out", "o.json", "--families", "flex,turbo"])
    assert e.value.code == 2 and "give families from flex, eager" in capsys.readouterr().err


class Misbehaving(Kernels):
    def __init__(self, result):
        super().__init__({"MY_KERNEL": 10.0, "CUDNN_ATTENTION": 20.0})
        self.result = result

    def time(self, w, c, backend, reps):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.mark.parametrize("result, error", [
    (TypeError("the runner's own bug"), TypeError),
    (KeyError("CUDNN_ATTENTION"), KeyError),
    (None, TypeError),  # not an iterable of times
    (["fast"], TypeError),
    ([0.0], ValueError),  # a time must be > 0
])
def test_a_runner_bug_ends_the_run_and_a_kernel_failure_drops_the_backend(result, error):
    with pytest.raises(error):
        run(Misbehaving(result))


def test_a_kernel_failure_with_a_long_non_ascii_message_is_dropped_whole_characters_only():
    message = "CUDA error: " + "\u00e9" * 300 + "\nsecond line"
    results = run(Misbehaving(RuntimeError(message)))
    r = results[0].results[0]
    assert r.timings == []
    why = r.excluded["MY_KERNEL"]
    assert why.startswith("failed while timed: CUDA error: \u00e9") and "second line" not in why
    assert len(why.encode()) <= len("failed while timed: ") + 160
    # a generator of times is read like a list
    ok = Misbehaving(None)
    ok.time = lambda w, c, backend, reps: (t for t in [10.0] * reps)
    assert run(ok)[0].results[0].timings
