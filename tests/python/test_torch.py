# SPDX-License-Identifier: Apache-2.0
# attnsel.torch: SDPA queries, the torch platform, SDPBackend mapping; agreement checks run where CUDA is.
import json
import os
import warnings

import pytest

torch = pytest.importorskip("torch")
at = pytest.importorskip("attnsel.torch")

import attnsel  # noqa: E402


def tensors(b=2, h=8, hk=None, s=64, sk=None, d=64, dv=None, dtype=torch.float16, device="cpu", grad=False):
    q = torch.randn(b, h, s, d, dtype=dtype, device=device, requires_grad=grad)
    k = torch.randn(b, hk or h, sk or s, d, dtype=dtype, device=device)
    v = torch.randn(b, hk or h, sk or s, dv or d, dtype=dtype, device=device)
    return q, k, v


def test_query_from_sdpa_maps_shapes_flags_and_features():
    q, k, v = tensors(h=8, hk=2, d=64, dv=128, dtype=torch.bfloat16)
    query = at.query_from_sdpa(q, k, v, attn_mask=torch.ones(64, 64, dtype=torch.bool), dropout_p=0.1,
                               is_causal=False, enable_gqa=True)
    assert (query.head_size, query.head_size_v, query.dtype, query.attn_type, query.num_heads) == (
        64, 128, "bfloat16", "encoder_only", 8)
    assert query.features == {"attn_mask", "dropout", "gqa"}
    plain = at.query_from_sdpa(*tensors(), is_causal=True)
    assert (plain.attn_type, plain.head_size_v, plain.features) == ("decoder", None, frozenset())
    with torch.enable_grad():
        assert "requires_grad" in at.query_from_sdpa(*tensors(grad=True)).features
    with torch.no_grad():
        assert "requires_grad" not in at.query_from_sdpa(*tensors(grad=True)).features
    # enable_gqa with equal head counts is not GQA
    assert "gqa" not in at.query_from_sdpa(*tensors(), enable_gqa=True).features
    with pytest.raises(ValueError, match="dtype: 'torch.float64' is not one of float16, bfloat16, float32"):
        at.query_from_sdpa(*tensors(dtype=torch.float64))


def test_query_from_sdpa_states_the_calls_shape():
    q, k, v = tensors(b=3, h=8, hk=2, s=1, sk=4096)
    query = at.query_from_sdpa(q, k, v, enable_gqa=True)
    assert (query.batch_size, query.num_heads, query.num_kv_heads, query.seq_len_q, query.seq_len_kv) == (
        3, 8, 2, 1, 4096)
    mask = torch.zeros(1, 4096, dtype=torch.float16, requires_grad=True)
    with torch.enable_grad():
        assert "attn_mask_grad" in at.query_from_sdpa(q, k, v, attn_mask=mask).features
    assert "attn_mask_3d" in at.query_from_sdpa(q, k, v, attn_mask=torch.ones(3, 1, 4096, dtype=torch.bool)).features


def test_select_sdpa_remembers_answers_per_call_description(call_key):
    reg, platform = attnsel.torch_sdpa_registry(), attnsel.Platform.cpu()
    a = at.select_sdpa(*tensors(), registry=reg, platform=platform)
    assert at.select_sdpa(*tensors(), registry=reg, platform=platform) is a  # same description: the same answer
    dropout = at.select_sdpa(*tensors(), dropout_p=0.1, registry=reg, platform=platform)
    assert (a.backend, dropout.backend) == ("FLASH_ATTENTION", "MATH")  # CPU flash refuses dropout
    # Grad mode is part of the description: a call of its own (its answer, FLASH_ATTENTION again, is equal
    # to `a` and so the same Selection object: select returns one object per equal answer).
    described = len(at._answers)
    with torch.enable_grad():
        trained = at.select_sdpa(*tensors(grad=True), registry=reg, platform=platform)
    assert len(at._answers) == described + 1 and trained == a
    assert len(at._answers) <= at._ANSWERS_LIMIT


def test_select_sdpa_answers_afresh_after_the_registry_is_merged(tmp_path, call_key):
    # The cache was keyed on id(registry), which a merge keeps: every shape seen before kept its old answer.
    reg, platform = attnsel.torch_sdpa_registry(), attnsel.Platform.cpu()
    assert at.select_sdpa(*tensors(), registry=reg, platform=platform).backend == "FLASH_ATTENTION"
    overlay = tmp_path / "math.json"
    rules = [{"domain": d, "vendor": "cpu", "order": ["MATH"]} for d in ("decoder", "encoder")]
    overlay.write_text(json.dumps({"format": "attnsel-catalog", "version": 1, "name": "math", "backends": [],
                                   "policies": rules}))
    reg.merge(str(overlay))
    assert at.select_sdpa(*tensors(), registry=reg, platform=platform).backend == "MATH"


# select_sdpa's call key: read in C++ (attnsel._torch_call, where it is built for this torch) or in Python.
KEYS = ["python"] + (["native"] if at.CALL_KEY_NATIVE else [])


@pytest.fixture(params=KEYS)
def call_key(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr(at, "_call_key", None)
    at._answers.clear()
    yield request.param
    at._answers.clear()


def test_the_native_call_key_is_built_where_the_build_says():
    # ctest's python_torch_tests sets this where CMake built attnsel._torch_call for this torch.
    if os.environ.get("ATTNSEL_EXPECT_TORCH_CALL") == "1":
        assert at.CALL_KEY_NATIVE, at._call_key_missing
    assert at.CALL_KEY_NATIVE == (at._call_key_missing is None)


def sample_calls():
    q, k, v = tensors(grad=True)
    yield (q, k, v), {}
    yield (q, k, v), {"is_causal": True}
    yield (q, k, v), {"dropout_p": 0.2}
    yield (q, k, v), {"attn_mask": torch.ones(64, 64, dtype=torch.bool)}
    yield (q, k, v), {"attn_mask": torch.ones(2, 64, 64, dtype=torch.bool)}
    yield (q, k, v), {"attn_mask": torch.zeros(64, 64, dtype=torch.float16, requires_grad=True)}
    yield tensors(h=8, hk=2), {"enable_gqa": True}
    yield tensors(s=1, sk=4096), {}
    yield tensors(d=64, dv=128), {}
    yield tensors(dtype=torch.float32), {}
    yield tensors(b=1, h=4), {}
    yield (q[0], k[0], v[0]), {}  # 3-D
    yield (q, k, v.transpose(1, 2)), {}  # same sizes other strides: one description


def test_the_native_call_key_tells_calls_apart_exactly_as_the_python_key():
    if not at.CALL_KEY_NATIVE:
        pytest.skip(f"attnsel._torch_call is not built for this torch: {at._call_key_missing}")
    names = ("attn_mask", "dropout_p", "is_causal", "enable_gqa")
    described = []
    for grad in (False, True):
        with torch.set_grad_enabled(grad):
            for args, kwargs in sample_calls():
                full = [*args] + [kwargs.get(n, d) for n, d in zip(names, (None, 0.0, False, False))]
                described.append((at._call_key(*full), at._python_call_key(*full)))
    for native, python in described:
        assert isinstance(native, bytes) and python is not None
    for a in described:
        for b in described:
            assert (a[0] == b[0]) == (a[1] == b[1])
    # Not a plain dense Tensor: Python describes it (a subclass), or nobody does (nested: answered afresh).
    q, k, v = tensors()
    assert at._call_key(q.as_subclass(Sub), k, v, None, 0.0, False, False) is None
    nested = torch.nested.nested_tensor([torch.randn(2, 8, 16), torch.randn(2, 4, 16)], layout=torch.jagged)
    assert at._call_key(nested, nested, nested, None, 0.0, False, False) is None
    assert at._call_key(q, k, v, "mask", 0.0, False, False) is None
    assert at._call_key(q, k, v, None, "0.5", False, False) is None
    with pytest.raises(TypeError, match="7 positional arguments"):
        at._call_key(q, k, v)


class Sub(torch.Tensor):
    pass


def test_select_sdpa_cached_answers_follow_every_input_query_from_sdpa_reads(call_key):
    """Each call twice (the second from select_sdpa's cache) against select on query_from_sdpa's Query."""
    # An H200 as torch sees it: there grad, dropout, masks, lengths and determinism change the answer.
    reg = at.registry()
    platform = attnsel.Platform.cuda(9, 0, components={"cudnn": "9.19.0", "cudnn_preferred": None})
    at._answers.clear()
    answers = set()

    old = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        for grad in (False, True):
            for deterministic, warn_only in ((False, False), (True, False), (True, True)):
                torch.use_deterministic_algorithms(deterministic, warn_only=warn_only)
                with torch.set_grad_enabled(grad):
                    for args, kwargs in sample_calls():
                        expected = attnsel.select(reg, at.query_from_sdpa(*args, **kwargs), platform)
                        answers.add(expected.backend)
                        for _ in range(2):
                            got = at.select_sdpa(*args, **kwargs, platform=platform)
                            assert (got.backend, got.rank) == (expected.backend, expected.rank), (grad, deterministic,
                                                                                                 kwargs)
    finally:
        torch.use_deterministic_algorithms(old[0], warn_only=old[1])
    assert len(answers) >= 3  # the calls do tell the backends apart
    # A dtype mismatch is refused every time, never answered from a cached call of the same shapes.
    q, k, v = tensors()
    at.select_sdpa(q, k, v, platform=platform)
    for _ in range(2):
        with pytest.raises(ValueError, match="must share one dtype"):
            at.select_sdpa(q, k.float(), v, platform=platform)


def test_deterministic_mode_is_a_feature():
    old = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        assert "deterministic" in at.query_from_sdpa(*tensors()).features
    finally:
        torch.use_deterministic_algorithms(old)


def test_cpu_platform_and_selection():
    p = at.platform("cpu")
    assert p.vendor == "cpu"
    q, k, v = tensors(dtype=torch.float32)
    assert at.select_sdpa(q, k, v).backend == "FLASH_ATTENTION"
    assert at.select_sdpa(q, k, v, dropout_p=0.5).backend == "MATH"   # CPU flash has no dropout


def test_to_sdp_backend_and_use_backend_run_exactly_the_choice():
    from torch.nn.attention import SDPBackend

    assert at.to_sdp_backend("MATH") == SDPBackend.MATH
    assert at.to_sdp_backend("cudnn_attention") == SDPBackend.CUDNN_ATTENTION
    with pytest.raises(ValueError, match="backend: 'FLASH_ATTN' is not one of FLASH_ATTENTION"):
        at.to_sdp_backend("FLASH_ATTN")
    q, k, v = tensors(dtype=torch.float32)
    s = at.select_sdpa(q, k, v, override="MATH")
    with at.use_backend(s) as backend:
        assert backend == SDPBackend.MATH
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    ref = torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1) @ v
    assert torch.allclose(out, ref, atol=1e-5)
    assert torch.allclose(at.scaled_dot_product_attention(q, k, v), ref, atol=1e-5)


SWITCH_GETTERS = {name: getattr(torch._C, f"_get_{name}_sdp_enabled") for name in ("flash", "mem_efficient", "math", "cudnn")}


@pytest.fixture
def routed():
    at._fallbacks.clear()
    at.install()
    yield
    at.uninstall()
    at._fallbacks.clear()


def test_routed_calls_run_exactly_the_selected_backend_and_restore_the_switches(switch_spy):
    q, k, v = tensors(dtype=torch.float32)
    before = {n: get() for n, get in SWITCH_GETTERS.items()}
    ref = torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1) @ v
    assert torch.allclose(at.scaled_dot_product_attention(q, k, v), ref, atol=1e-5)
    at.scaled_dot_product_attention(q, k, v, dropout_p=0.5)  # CPU flash has no dropout: MATH
    assert switch_spy == [["flash"], ["math"]]
    assert {n: get() for n, get in SWITCH_GETTERS.items()} == before
    assert {n: get() for n, get in SWITCH_GETTERS.items()} == before


def test_a_kernel_that_raises_leaves_the_switches_as_they_were(monkeypatch):
    before = {n: get() for n, get in SWITCH_GETTERS.items()}

    def refuses(*args, **kwargs):
        raise RuntimeError("No available kernel. Aborting execution.")

    monkeypatch.setattr(at, "_sdpa", refuses)
    with pytest.raises(RuntimeError, match="No available kernel"):
        at.scaled_dot_product_attention(*tensors(dtype=torch.float32), override="MATH")
    assert {n: get() for n, get in SWITCH_GETTERS.items()} == before


def test_install_routes_every_sdpa_call_and_uninstall_restores_torchs(switch_spy, routed):
    F = torch.nn.functional
    assert at.installed() and F.scaled_dot_product_attention is at._routed
    q, k, v = tensors(h=8, hk=2, dtype=torch.float32)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert torch.equal(out, at._TORCH_SDPA(q, k, v, is_causal=True, enable_gqa=True))
    assert switch_spy[-1] == [at._SWITCH_OF[at.select_sdpa(q, k, v, is_causal=True, enable_gqa=True).backend]]
    # Modules that call F's function are routed too (in training mode: eval's fast path calls no SDPA).
    mha = torch.nn.MultiheadAttention(64, 4, batch_first=True).train()
    x = torch.randn(2, 5, 64)
    calls = len(switch_spy)
    with torch.no_grad():
        mha(x, x, x, need_weights=False)
    assert len(switch_spy) == calls + 1 and len(switch_spy[-1]) == 1
    at.uninstall()
    assert not at.installed() and F.scaled_dot_product_attention is at._TORCH_SDPA
    with pytest.raises(TypeError, match="registry: expected attnsel.Registry, got str"):
        at.install("torch_sdpa")
    assert not at.installed()


def test_install_with_a_registry_routes_by_it(cpu_math_registry, switch_spy, routed):
    at.install(cpu_math_registry)
    torch.nn.functional.scaled_dot_product_attention(*tensors(dtype=torch.float32))
    assert switch_spy[-1] == ["math"]


def test_a_call_attnsel_cannot_describe_runs_torchs_choice_warned_once_and_counted(routed):
    q, k, v = tensors(dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="runs torch's own choice: dtype: 'torch.float64' is not one of"):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time: counted, not warned
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1) @ v)
    assert at.fallbacks() == {"dtype: 'torch.float64' is not one of float16, bfloat16, float32": 2}


def test_compiled_calls_route_without_a_graph_break(switch_spy, routed):
    F = torch.nn.functional

    def layer(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).transpose(1, 2) * 2

    q, k, v = tensors(h=8, hk=2, dtype=torch.float32)
    explained = torch._dynamo.explain(layer)(q, k, v)
    assert explained.graph_break_count == 0, explained.break_reasons
    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    calls = len(switch_spy)
    out = compiled(q, k, v)
    assert torch.equal(out, at._TORCH_SDPA(q, k, v, is_causal=True, enable_gqa=True).transpose(1, 2) * 2)
    assert len(switch_spy) > calls and switch_spy[-1] == ["flash"]  # chosen at run time, inside attnsel::sdpa
    # Compiled training keeps torch's own traced call (the operator has no backward), and still no break.
    torch._dynamo.reset()
    qg = q.clone().requires_grad_()
    compiled_grad = torch.compile(layer, fullgraph=True, backend="aot_eager")
    compiled_grad(qg, k, v).sum().backward()
    assert qg.grad is not None and qg.grad.shape == q.shape


def test_cudnn_version_decoding(monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 91900)
    assert at.cudnn_version() == "9.19.0"
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 8907)
    assert at.cudnn_version() == "8.9.7"


def test_python_components_report_importable_packages(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if name == "flashinfer" else real(name))
    comps = at.python_components()
    assert "flashinfer" in comps and "aiter" not in comps


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_choices_agree_with_torch_fused_sdp_choice():
    p = at.platform()
    assert p.vendor == "cuda" and p.capability == torch.cuda.get_device_capability()
    cases = [dict(d=64), dict(d=128, dtype=torch.bfloat16), dict(d=72), dict(d=256), dict(d=64, dtype=torch.float32)]
    for shape in cases:
        q, k, v = tensors(device="cuda", **shape)
        chosen = at.select_sdpa(q, k, v)
        assert at.to_sdp_backend(chosen).value == torch._fused_sdp_choice(q, k, v, None, 0.0, False), shape
        with at.use_backend(chosen):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)


def test_a_call_the_chosen_kernel_refuses_runs_torchs_choice(routed):
    # Shapes the catalog does not state: a broadcast batch and 5-D inputs. Torch runs them itself (math);
    # the kernel attnsel picks refuses, so the routed call runs torch's choice, warned and counted.
    F = torch.nn.functional
    q = torch.randn(1, 4, 8, 16)
    k = torch.randn(2, 4, 8, 16)
    five = torch.randn(2, 3, 4, 8, 16)
    with pytest.warns(RuntimeWarning, match="refused the call"):
        out = F.scaled_dot_product_attention(q, k, k)
    assert torch.equal(out, at._TORCH_SDPA(q, k, k))
    assert torch.equal(F.scaled_dot_product_attention(five, five, five), at._TORCH_SDPA(five, five, five))
    assert sum(n for why, n in at.fallbacks().items() if "refused the call" in why) == 2


def test_the_callers_own_switches_win(switch_spy, routed):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = tensors(dtype=torch.float32)
    with sdpa_kernel([SDPBackend.MATH]):  # attnsel would pick flash on the CPU
        with pytest.warns(RuntimeWarning, match="FLASH_ATTENTION is switched off by the caller"):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert switch_spy == [["math"]]
    with sdpa_kernel([SDPBackend.MATH]):
        with pytest.raises(RuntimeError, match="FLASH_ATTENTION is switched off here"):
            at.scaled_dot_product_attention(q, k, v)


def test_concurrent_routed_calls_leave_the_switches_as_they_were(routed):
    import threading

    before = {n: get() for n, get in SWITCH_GETTERS.items()}
    q, k, v = tensors(dtype=torch.float32)

    def work(dropout):
        for _ in range(200):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=dropout)  # flash / math

    threads = [threading.Thread(target=work, args=(p,)) for p in (0.0, 0.5, 0.0, 0.5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {n: get() for n, get in SWITCH_GETTERS.items()} == before


def test_compiled_training_with_a_mask_that_needs_grad_keeps_torchs_call(routed):
    def layer(q, k, v, bias):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)

    q, k, v = tensors(dtype=torch.float32)
    bias = torch.zeros(64, 64, requires_grad=True)
    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    compiled(q, k, v, bias).sum().backward()
    assert bias.grad is not None and bias.grad.shape == bias.shape
