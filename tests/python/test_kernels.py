# SPDX-License-Identifier: Apache-2.0
# attnsel.kernels and the tuner's KernelRunner on the CPU with real torch: the shipped kernels compute
# attention as SDPA does, bad kernels (raising, wrong shape, dtype or values) are excluded with their
# reason, a tuning run over callables times them by the wall clock, and install(kernels=...) runs an extra
# backend where the registry selects it, eager and compiled, falling back with a reason where it cannot.
import json
import warnings

import pytest

torch = pytest.importorskip("torch")
at = pytest.importorskip("attnsel.torch")
ak = pytest.importorskip("attnsel.kernels")

import torch.nn.functional as F  # noqa: E402

import attnsel  # noqa: E402
from attnsel import tune  # noqa: E402

# A CUDA platform for the catalog's answers; the kernels themselves run on the CPU.
H100 = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred", "torch=2.11.0"])
        .with_device_name("NVIDIA H100 80GB HBM3"))


def qkv(b=2, h=4, hk=2, s=32, sk=None, d=32, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, h, s, d, dtype=dtype, generator=g)
    k = torch.randn(b, hk, sk or s, d, dtype=dtype, generator=g)
    v = torch.randn(b, hk, sk or s, d, dtype=dtype, generator=g)
    return q, k, v


def reference(q, k, v, mask=None, causal=False, scale=None):
    with at.use_backend("MATH"):
        return at._TORCH_SDPA(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=True)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sk", [None, 48])
def test_eager_and_flex_compute_sdpa(causal, sk):
    q, k, v = qkv(sk=sk)
    want = reference(q, k, v, causal=causal, scale=0.2)
    for kernel in (ak.eager_attention(), ak.flex_attention(compiled=False)):
        got = kernel(q, k, v, None, 0.0, causal, 0.2, True)
        assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5, rtol=1e-5), kernel.__name__


def test_eager_takes_boolean_and_additive_masks_and_flex_refuses_one():
    q, k, v = qkv()
    keep = torch.rand(32, 32, generator=torch.Generator().manual_seed(1)) > 0.3
    keep[:, 0] = True  # every row keeps a key
    eager = ak.eager_attention()
    assert torch.allclose(eager(q, k, v, keep, 0.0, False, None, True), reference(q, k, v, keep), atol=1e-5)
    bias = torch.randn(32, 32)
    assert torch.allclose(eager(q, k, v, bias, 0.0, False, None, True), reference(q, k, v, bias), atol=1e-5)
    with pytest.raises(ValueError, match="takes no attn_mask"):
        ak.flex_attention(compiled=False)(q, k, v, keep, 0.0, False, None, True)
    with pytest.raises(ValueError, match="takes no dropout"):
        eager(q, k, v, None, 0.1, False, None, True)


def test_the_kernels_catalog_reaches_its_backends_only_when_asked():
    reg = ak.registry()
    assert {"FLEX_ATTENTION", "EAGER"} <= set(reg.names) and "FLEX_ATTENTION" not in attnsel.torch_sdpa_registry()
    q = tune.query_of(tune.Workload("w", 32, 8, 128, 128, "bfloat16", ()), tune.decoder_classes([512], [], [])[0])
    assert attnsel.select(reg, q, H100).backend == "CUDNN_ATTENTION"  # in no policy order
    assert attnsel.select(reg, q, H100, "FLEX_ATTENTION").backend == "FLEX_ATTENTION"
    with pytest.raises(ValueError, match="not one of"):
        ak.sdpa("FLEX_ATTENTION")


def workload(dtype="float32"):
    return tune.Workload("tiny", 4, 2, 32, 32, dtype, tune.decoder_classes([64], [2], [48]))


def runner(kernels, **kw):
    return tune.KernelRunner(kernels, device="cpu", warmup=1, target_ms=0.2, **kw)


def test_bad_kernels_are_excluded_with_their_reason():
    w = workload()
    c = w.classes[0]
    good = ak.eager_attention()

    def raises(*a):
        raise ZeroDivisionError("the kernel's own bug")

    kernels = {
        "EAGER": good,
        "RAISES": raises,
        "NONE": lambda *a: None,
        "SHAPE": lambda q, k, v, *a: good(q, k, v, *a)[:, :, :1],
        "DTYPE": lambda *a: good(*a).double(),
        "VALUES": lambda *a: good(*a) + 1.0,
        "NAN": lambda *a: good(*a) * float("nan"),
    }
    r = runner(kernels)
    assert r.check(w, c, "EAGER") is None
    assert r.check(w, c, "RAISES") == "did not run: ZeroDivisionError: the kernel's own bug"
    assert r.check(w, c, "NONE") == "wrong output: returned NoneType, not a tensor"
    assert r.check(w, c, "SHAPE").startswith("wrong output: returned (1, 4, 1, 32) torch.float32 on cpu, expected "
                                             "(1, 4, 64, 32)")
    assert "torch.float64" in r.check(w, c, "DTYPE")
    assert r.check(w, c, "VALUES").startswith("wrong output: max abs error 1 against the float32 reference")
    assert r.check(w, c, "NAN").startswith("wrong output: max abs error inf")
    with pytest.raises(RuntimeError, match="ZeroDivisionError: the kernel's own bug"):
        r.time(w, c, "RAISES", 2)
    samples = r.time(w, c, "EAGER", 3)
    assert len(samples) == 3 and all(s > 0 for s in samples)


def test_the_runner_refuses_what_it_cannot_time():
    with pytest.raises(TypeError, match="mapped to a callable"):
        runner({"EAGER": "not callable"})
    with pytest.raises(ValueError, match="at least one"):
        runner({})
    for name in ("MYSTERY", "eager", "FLEX"):  # an unknown name, and aliases or spellings of known ones
        r = runner({"EAGER": ak.eager_attention(), name: ak.eager_attention()})
        with pytest.raises(ValueError, match=f"kernels for {name}: not backends of the catalog"):
            tune.tune([workload()], ak.registry(), H100, r)
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device, not cpu"):
        runner({"EAGER": ak.eager_attention()}, cuda_graphs=True)


class _Device:
    """A CUDA stream as the tests need it: the host queues operations, the device runs each when the one
    before it is done and it has been queued; a full launch queue (`depth` operations not yet started)
    makes the host wait. Times in seconds; `rate` is the sleep's clock in cycles per second."""

    def __init__(self, launch_s, rate=1.5e9, depth=1000):
        self.host, self.busy_until, self.launch_s, self.rate, self.depth = 0.0, 0.0, launch_s, rate, depth
        self.waiting = []  # start times of queued operations the device has not started at `host`

    def queue(self, seconds):
        self.waiting = [t for t in self.waiting if t > self.host]
        if len(self.waiting) >= self.depth:
            self.host = self.waiting.pop(0)
        start = max(self.busy_until, self.host)
        self.busy_until = start + seconds
        self.waiting.append(start)
        return start

    def launch(self, seconds):  # a kernel: the host pays the launch, the device the kernel
        self.host += self.launch_s
        self.queue(seconds)

    # torch.cuda's surface that attnsel.tune's queued samples use
    def Event(self, enable_timing=False):
        device = self

        class Event:
            def record(self):
                self.at = device.queue(0.0)

            def elapsed_time(self, later):
                return (later.at - self.at) * 1000.0

        return Event()

    def _sleep(self, cycles):
        self.queue(cycles / self.rate)

    def synchronize(self):
        self.host = max(self.host, self.busy_until)


def test_queued_samples_time_the_kernels_not_their_launches():
    # 20 us to launch a call of one 8 us kernel: launched, the device waits on the host at each call.
    dev = _Device(launch_s=20e-6)
    queue = tune.kernel_runner._Queue(dev, lambda: dev.host)
    key = ("class", "FLASH")

    def run(n):
        for _ in range(n):
            dev.launch(8e-6)

    ms, covered, sized = queue.sample(key, lambda: run(100))
    assert not sized and not covered and ms == pytest.approx(100 * 20e-3, rel=0.02)  # the launch rate
    ms, covered, sized = queue.sample(key, lambda: run(100))
    assert sized and covered and ms == pytest.approx(100 * 8e-3, rel=1e-6)  # back to back
    assert queue.cycles_per_s == pytest.approx(1.5e9)  # the clock the sleep showed, not the 2 GHz guess
    per_call, inner = queue.samples(key, run, 100, 3)
    assert inner == 100 and per_call == pytest.approx([8e-3] * 3)
    # An unsized first sample settles before the timed ones.
    fresh = tune.kernel_runner._Queue(dev, lambda: dev.host)
    assert fresh.samples(("other",), run, 50, 2) == (pytest.approx([8e-3] * 2), 50)


def test_queued_samples_take_fewer_calls_when_the_launch_queue_fills():
    # Five kernels a call and a queue of 200 launches: 100 calls never fit, whatever the sleep.
    dev = _Device(launch_s=4e-6, depth=200)
    queue = tune.kernel_runner._Queue(dev, lambda: dev.host)

    def run(n):
        for _ in range(n * 5):
            dev.launch(1e-6)

    per_call, inner = queue.samples(("class", "MATH"), run, 100, 2)
    assert inner == 25  # halved until a sample fits the queue
    assert per_call == pytest.approx([5e-3] * 2)  # the kernels' own 5 x 1 us, not the 20 us of launches
    assert len(queue.queue_s) == 1 and queue.queue_s[("class", "MATH")] < 25 * 5 * 4e-6 * 1.01


def test_queued_timing_is_off_the_cuda_device():
    assert not runner({"EAGER": ak.eager_attention()}).queued
    assert not runner({"EAGER": ak.eager_attention()}, queued=True).queued


# Without cudnn_preferred the catalog's default on the H100 is FLASH_ATTENTION, which runs on the CPU too.
H100_DEPRIORITIZED = (attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "torch=2.11.0"])
                      .with_device_name("NVIDIA H100 80GB HBM3"))


def test_a_tuning_run_over_callables_on_the_cpu(tmp_path):
    # Real kernels, checked against the reference; the clock is the test's, so the decision does not hang
    # on the machine's load: each call advances it by its kernel's cost.
    now = [0.0]

    def costing(kernel, seconds):
        def run(*a):
            now[0] += seconds
            return kernel(*a)
        return run

    def broken(*a):
        raise RuntimeError("no kernel image for this device")

    slow_flash = costing(ak.sdpa("FLASH_ATTENTION"), 0.005)  # the default, the slowest by far
    kernels = {"FLASH_ATTENTION": slow_flash, "MATH": costing(ak.sdpa("MATH"), 0.002),
               "EAGER": costing(ak.eager_attention(), 0.001), "FLEX_ATTENTION": broken}
    results = tune.tune([workload("bfloat16")], ak.registry(attnsel.builtin_catalog("torch_sdpa")),
                        H100_DEPRIORITIZED, runner(kernels, clock=lambda: now[0]),
                        method=tune.Method(rounds=2, reps=2, confirm_rounds=2), kernels_catalog=ak.CATALOG)
    assert [r.shape.name for r in results[0].results] == ["prefill 64", "decode b2 kv48"]
    for r in results[0].results:
        assert {t.backend for t in r.timings} == {"FLASH_ATTENTION", "MATH", "EAGER"}
        assert r.excluded["FLEX_ATTENTION"] == "did not run: RuntimeError: no kernel image for this device"
        assert r.default == r.torch_default == "FLASH_ATTENTION"  # no baseline given: the catalog's default
        assert [t.backend for t in r.timings] == ["EAGER", "MATH", "FLASH_ATTENTION"]
        assert r.timings[0].median_us == pytest.approx(1000.0) and r.timings[0].spread_pct == 0.0
        assert r.decision.winner == "EAGER" and r.decision.why.startswith("confirmed: first pass 400.0% faster")
    doc = tune.overlay(results)
    assert len(doc["policies"]) == 2
    assert [b["name"] for b in doc["backends"]] == ["EAGER"]  # the rule names it: its descriptor travels
    base = attnsel.torch_sdpa_registry()  # the overlay loads on the base alone and selects the winners
    path = tmp_path / "o.json"
    path.write_text(json.dumps(doc))
    base.merge(str(path))
    for r in results[0].results:
        assert attnsel.select(base, tune.query_of(results[0].workload, r.shape), H100_DEPRIORITIZED).backend == \
            r.decision.winner


def test_a_class_whose_default_has_no_kernel_is_skipped():
    results = tune.tune([workload("bfloat16")], ak.registry(attnsel.builtin_catalog("torch_sdpa")),
                        H100_DEPRIORITIZED, runner({"MATH": ak.sdpa("MATH"), "EAGER": ak.eager_attention()}))
    assert results[0].results == []
    assert results[0].skipped[0] == ("prefill 64", "not measured: the catalog's default FLASH_ATTENTION has no "
                                                   "kernel given to the runner, so no winner can be shown to beat it")


@pytest.fixture
def eager_first(tmp_path):
    """ak.registry() with a rule that puts EAGER first on the CPU: routed calls select it."""
    reg = ak.registry()
    rules = [{"domain": d, "vendor": "cpu", "order": ["EAGER", "MATH"]} for d in ("decoder", "encoder")]
    path = tmp_path / "eager-first.json"
    path.write_text(json.dumps({"format": "attnsel-catalog", "version": 2, "name": "eager-first", "backends": [],
                                "policies": rules}))
    reg.merge(str(path))
    yield reg
    at.uninstall()


def spy_on(kernel):
    calls = []

    def run(*a):
        calls.append(a[0].shape)
        return kernel(*a)

    return run, calls


def test_install_runs_a_given_kernel_where_the_registry_selects_it(eager_first):
    run, calls = spy_on(ak.eager_attention())
    at.install(eager_first, kernels={"EAGER": run})
    q, k, v = qkv()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert calls == [q.shape] and torch.allclose(out, reference(q, k, v, causal=True), atol=1e-5)
    assert at.fallbacks() == {}


def test_install_compiled_runs_the_kernel_at_run_time(eager_first):
    run, calls = spy_on(ak.eager_attention())
    at.install(eager_first, kernels={"EAGER": run})
    q, k, v = qkv()

    def layer(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True) * 2

    out = torch.compile(layer, fullgraph=True, backend="eager")(q, k, v)
    assert calls and torch.allclose(out, 2 * reference(q, k, v, causal=True), atol=1e-5)


def test_install_falls_back_where_the_kernel_is_missing_or_raises(eager_first):
    at.install(eager_first)
    q, k, v = qkv()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert torch.allclose(out, reference(q, k, v), atol=1e-5)
    assert at.fallbacks() == {"EAGER has no kernel here (install(kernels=...) gives one)": 1}
    assert any("EAGER has no kernel here" in str(w.message) for w in seen)

    def broken(*a):
        raise NotImplementedError("this kernel has no CPU path")

    at.install(eager_first, kernels={"EAGER": broken})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert torch.allclose(out, reference(q, k, v), atol=1e-5)
    assert at.fallbacks() == {"EAGER refused the call: this kernel has no CPU path": 1}


def test_install_refuses_kernels_it_cannot_route(eager_first):
    with pytest.raises(ValueError, match="MYSTERY is not a backend of the catalog 'torch_sdpa"):
        at.install(kernels={"MYSTERY": ak.eager_attention()})
    assert not at.installed()
    run, calls = spy_on(ak.eager_attention())
    at.install(eager_first, kernels={"EAGER": run})
    for bad, error, message in ((("MATH",), ValueError, "MATH is one of SDPA's backends"),
                                (("flash",), ValueError, "flash is one of SDPA's backends"),
                                (("eager",), ValueError, "eager is not a backend of the catalog"),
                                (("EAGER", 3), TypeError, "mapped to a callable")):
        with pytest.raises(error, match=message):
            at.install(eager_first, kernels={bad[0]: bad[1] if len(bad) > 1 else ak.eager_attention()})
    q, k, v = qkv()  # nothing changed: the first install's kernel still runs
    F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert calls == [q.shape] and at.fallbacks() == {}


def test_install_falls_back_where_a_kernel_returns_the_wrong_output(eager_first):
    good = ak.eager_attention()
    q, k, v = qkv()
    for wrong, said in ((lambda *a: None, "EAGER returned NoneType"),
                        (lambda *a: good(*a).double(), "torch.float64, not the call's output"),
                        (lambda *a: good(*a)[:, :1], "EAGER returned torch.Size([2, 1, 32, 32])")):
        at.install(eager_first, kernels={"EAGER": wrong})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        assert torch.allclose(out, reference(q, k, v), atol=1e-5)
        assert len(at.fallbacks()) == 1 and said in next(iter(at.fallbacks()))


def test_compiled_flex_computes_sdpa():
    flex = ak.flex_attention()  # torch.compile with Inductor: C++ on the CPU
    for causal, s, sk in ((True, 64, 64), (False, 1, 40), (False, 1, 41)):  # decode steps: a growing KV length
        q, k, v = qkv(b=1, s=s, sk=sk)
        got = flex(q, k, v, None, 0.0, causal, None, True)
        assert torch.allclose(got, reference(q, k, v, causal=causal), atol=1e-5, rtol=1e-5)
    assert torch._dynamo.config.recompile_limit >= 64
