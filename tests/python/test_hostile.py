# SPDX-License-Identifier: Apache-2.0
# The Python surface under hostile use (issue 22) and what a newcomer trips on (issue 23): no action crashes
# or hangs, equal values hash alike, wrong arguments name themselves, bounds hold, values pickle.
import concurrent.futures
import copy
import os
import pickle
import pydoc
import random
import subprocess
import sys
import textwrap
import time
import zlib

import pytest

import attnsel

CLASSES = ["Query", "Platform", "OverrideSet", "Registry", "Reason", "Candidate", "Selection", "Explanation", "Selector",
           "ModelConfig"]


def run_python(code, timeout=60):
    """Runs `code` in a fresh interpreter with this one's module path; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env)


# ---- no Python-level action crashes the interpreter ---------------------------------------------------

def test_every_exposed_class_is_covered():
    exposed = {name for name in attnsel.__all__ if isinstance(getattr(attnsel, name), type)
               and not issubclass(getattr(attnsel, name), Exception)
               and getattr(attnsel, name).__module__ == "attnsel"}
    assert exposed == set(CLASSES)


def test_objects_that_skip_their_constructor_raise_a_clear_error_and_never_crash():
    # In a child process: a crash there is a failed assertion here, not a dead test run.
    result = run_python("""
        import pickle, attnsel
        reg, q, p = attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cuda(9, 0)
        for name in %r:
            cls = getattr(attnsel, name)
            obj = cls.__new__(cls)
            actions = [repr, str, hash, lambda o: o == o, lambda o: o == cls, attnsel.to_json, pickle.dumps,
                       lambda o: attnsel.select(reg, o, p), lambda o: attnsel.select(o, q, p),
                       lambda o: attnsel.select(reg, q, o), lambda o: attnsel.explain(reg, q, p, o),
                       lambda o: attnsel.Registry.merge(reg.copy(), o)]
            actions += [lambda o, a=a: getattr(o, a) for a in dir(cls) if not a.startswith("__")]
            actions += [lambda o, a=a: getattr(o, a)() for a in ("copy", "replace", "with_components")
                        if hasattr(cls, a)]
            for act in actions:
                try:
                    act(obj)
                except (TypeError, ValueError, AttributeError) as e:
                    assert "Unable to cast" not in str(e), (name, e)
        print("survived")
    """ % (CLASSES,))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "survived" in result.stdout


@pytest.mark.parametrize("cls, state", [
    ("Query", {"head_size": 0}),
    ("Query", {"head_sz": 64}),
    ("Query", {"head_size": True}),
    ("Query", {"features": "sinks"}),
    ("Query", (128, None)),
    ("Query", None),
    ("Platform", ("cuda", "sm_9", [])),
    ("Platform", ("gpu", None, [])),
    ("Platform", ("cpu", None, ["Bad Name"])),
    ("Platform", ("cpu",)),
    ("OverrideSet", ("", "", "cli")),
    ("OverrideSet", (1, 2, 3)),
    ("Registry", ("[]",)),
    ("Registry", (3,)),
    ("Reason", ("no_such_code", "x")),
    ("Candidate", {"name": "X"}),
    ("Candidate", {"name": "X", "variant": "", "rank": -1, "verdict": "selected", "forced": False, "reasons": []}),
    ("Selection", ("{}", 0, 1, False, "none", False, [])),
    ("Selection", ("x",)),
    ("Explanation", ("[]", None, None, "", "none", False)),
])
def test_tampered_pickle_states_are_refused_like_the_constructor(cls, state):
    """setstate reads a state with the constructor's checks: a state the constructor would refuse raises."""
    klass = getattr(attnsel, cls)
    obj = klass.__new__(klass)
    with pytest.raises((TypeError, ValueError)):
        obj.__setstate__(state)


def test_a_crafted_pickle_stream_cannot_build_a_value_the_constructor_refuses():
    good = pickle.dumps(attnsel.Query(head_size=64), protocol=2)
    assert pickle.loads(good) == attnsel.Query(head_size=64)
    bad = good.replace(b"K@", b"K\x00")  # BININT1 64 -> 0
    assert bad != good
    with pytest.raises(ValueError, match="head_size: 0 is outside"):
        pickle.loads(bad)


# ---- subinterpreters: refused with an ImportError, never a hang ---------------------------------------

SUBINTERPRETERS = next((m for m in ("_interpreters", "_xxsubinterpreters")
                        if subprocess.run([sys.executable, "-c", f"import {m}"], capture_output=True).returncode == 0),
                       None)


@pytest.mark.skipif(SUBINTERPRETERS is None, reason="this Python has no subinterpreter module")
@pytest.mark.parametrize("main_imports_first", [False, True])
@pytest.mark.parametrize("what", ["import attnsel", "import attnsel._attnsel"])
def test_a_subinterpreter_gets_an_import_error_and_never_deadlocks(main_imports_first, what):
    child = "\n".join([
        "try:",
        f"    {what}",
        "    import attnsel",
        "    attnsel.select(attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cuda(9, 0), 'NOPE')",
        "except ImportError as e:",
        "    assert 'subinterpreter' in str(e), e",
        "else:",
        "    raise AssertionError('imported')",
    ])
    code = "\n".join([
        f"import {SUBINTERPRETERS} as interpreters",
        "import attnsel" if main_imports_first else "",
        "sub = interpreters.create()",
        f"interpreters.run_string(sub, {child!r})",
        "print('refused')",
    ])
    result = run_python(code, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused" in result.stdout


@pytest.mark.skipif(SUBINTERPRETERS is None, reason="this Python has no subinterpreter module")
@pytest.mark.parametrize("route", ["stand-in package", "extension loader"])
def test_a_subinterpreter_that_bypasses_the_package_still_gets_an_import_error(route):
    # Before: with the core imported by the main interpreter, CPython gave a subinterpreter a copy of its
    # dict without running the init function (pybind11's m_size -1), so the core worked there and
    # parse_catalog raised CatalogError instead of the documented ImportError.
    core = attnsel._attnsel.__file__
    load = {
        "stand-in package": ["import types", "pkg = types.ModuleType('attnsel')",
                             f"pkg.__path__ = [{os.path.dirname(core)!r}]", "sys.modules['attnsel'] = pkg",
                             "import attnsel._attnsel as core"],
        "extension loader": ["import importlib.machinery, importlib.util",
                             f"loader = importlib.machinery.ExtensionFileLoader('attnsel._attnsel', {core!r})",
                             "spec = importlib.util.spec_from_loader('attnsel._attnsel', loader)",
                             "core = importlib.util.module_from_spec(spec)"],
    }[route]
    child = "\n".join(["import sys", "try:", *("    " + line for line in load),
                        "    core.parse_catalog('{')",
                        "except ImportError as e:",
                        "    assert 'subinterpreter' in str(e), e",
                        "    print('refused')",
                        "except BaseException as e:",
                        "    print('not refused:', type(e).__name__, e)",
                        "else:",
                        "    print('not refused: imported and parsed')"])
    code = "\n".join([
        f"import {SUBINTERPRETERS} as interpreters",
        "import attnsel",
        "sub = interpreters.create()",
        f"interpreters.run_string(sub, {child!r})",
        # The main interpreter's core is untouched, and importing it again there gives the same module.
        "import importlib, sys",
        "core = sys.modules.pop('attnsel._attnsel')",
        "assert importlib.import_module('attnsel._attnsel') is core",
        "try:",
        "    attnsel.parse_catalog('{')",
        "except attnsel.CatalogError:",
        "    print('main: CatalogError')",
    ])
    result = run_python(code, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["refused", "main:", "CatalogError"], result.stdout


# ---- equal values hash equally (property tests over every value type) -------------------------------

def random_query_kwargs(rng):
    kw = {}
    if rng.random() < 0.7:
        kw["head_size"] = rng.choice([64, 80, 128, 256])
    if rng.random() < 0.5:
        kw["head_size_v"] = rng.choice([None, 64, 128, 512])
    for field, values in (("dtype", ["float16", "fp16", "bfloat16", "bf16", "float32"]),
                          ("kv_cache_dtype", ["auto", "fp8", "fp8_e4m3"]),
                          ("domain", ["decoder", "encoder"]), ("mode", ["standard", "mla"])):
        if rng.random() < 0.5:
            kw[field] = rng.choice(values)
    if rng.random() < 0.5:
        kw["block_size"] = rng.choice([None, 16, 32])
    if rng.random() < 0.5:
        kw["num_heads"] = rng.choice([None, 8, 16])
    if rng.random() < 0.6:
        kw["features"] = rng.sample(["sinks", "alibi", "dcp", "sliding_window"], rng.randint(0, 3))
    return kw


def equivalent_query_kwargs(kw, rng):
    """Another spelling of the same query: value head size spelt out, features reordered and repeated."""
    out = dict(kw)
    if out.get("head_size_v") is None and rng.random() < 0.5:
        out["head_size_v"] = out.get("head_size", 128)
    if "features" in out:
        features = list(out["features"]) * 2
        rng.shuffle(features)
        out["features"] = set(features) if rng.random() < 0.5 else tuple(features)
    return out


def test_equal_queries_hash_equally_property():
    rng = random.Random(22)
    queries = []
    for _ in range(400):
        kw = random_query_kwargs(rng)
        a, b = attnsel.Query(**kw), attnsel.Query(**equivalent_query_kwargs(kw, rng))
        assert a == b and hash(a) == hash(b) and repr(a) == repr(b), (kw, a, b)
        queries.append(a)
    for a, b in zip(queries, queries[1:]):
        assert (a == b) <= (hash(a) == hash(b))
    assert attnsel.Query(head_size=128) == attnsel.Query(head_size=128, head_size_v=128)
    assert hash(attnsel.Query(head_size=128)) == hash(attnsel.Query(head_size=128, head_size_v=128))


def test_equal_platforms_hash_equally_property():
    rng = random.Random(23)
    for _ in range(300):
        comps = {name: rng.choice([None, "1", "1.0", "2.5.0"]) for name in
                 rng.sample(["cudnn", "flashinfer", "aiter", "flash_attn", "x"], rng.randint(0, 4))}
        padded = {k: (v + ".0" if v and rng.random() < 0.5 else v) for k, v in comps.items()}
        specs = [k + (f"={v}" if v else "") for k, v in padded.items()]
        rng.shuffle(specs)
        a = attnsel.Platform.cuda(9, 0, components=comps)
        b = attnsel.Platform("cuda", "sm_90", specs)
        assert a == b and hash(a) == hash(b), (a, b)
    assert hash(attnsel.Platform.cpu(components=["x=9.0"])) == hash(attnsel.Platform.cpu(components=["x=9.0.0"]))


def test_equal_small_values_hash_equally(reference, hopper):
    pairs = [
        (attnsel.OverrideSet(decoder="FLASH_ATTN"), attnsel.OverrideSet(decoder="FLASH_ATTN", source="api")),
        (attnsel.Reason(code="dtype", message="m"), attnsel.Reason(code="dtype", message="m")),
        (attnsel.select(reference, attnsel.Query(), hopper), attnsel.select(reference, attnsel.Query(), hopper)),
        (attnsel.explain(reference, attnsel.Query(), hopper), attnsel.explain(reference, attnsel.Query(), hopper)),
    ]
    e = attnsel.explain(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN")
    pairs += [(c, copy.deepcopy(c)) for c in e.candidates]
    for a, b in pairs:
        assert a == b and hash(a) == hash(b), a


# ---- arguments: bools, types, typos, bounds ---------------------------------------------------------

@pytest.mark.parametrize("field", ["head_size", "head_size_v", "block_size", "num_heads"])
def test_integer_fields_refuse_bools(field):
    with pytest.raises(TypeError, match=f"{field}: expected an int, got bool"):
        attnsel.Query(**{field: True})
    with pytest.raises(TypeError, match=field):
        attnsel.Query().replace(**{field: False})


def test_a_mistyped_keyword_is_named_with_did_you_mean():
    with pytest.raises(TypeError, match=r"Query\(\) got an unexpected keyword argument 'head_sz'; did you mean "
                                        r"'head_size'\?"):
        attnsel.Query(head_sz=64)
    with pytest.raises(TypeError, match="did you mean 'features'"):
        attnsel.Query().replace(feature={"sinks"})
    with pytest.raises(TypeError, match="keyword arguments only"):
        attnsel.Query(64)
    with pytest.raises(TypeError, match="did you mean 'device_index'"):
        attnsel.detect.__dict__["_detect"]({"device_idx": 0}, [])


@pytest.mark.parametrize("make, argument", [
    (lambda: attnsel.Query(head_size="64"), "head_size"),
    (lambda: attnsel.Query(head_size=64.0), "head_size"),
    (lambda: attnsel.Query(dtype=16), "dtype"),
    (lambda: attnsel.Query(features=[1]), "features"),
    (lambda: attnsel.Query(features=3), "features"),
    (lambda: attnsel.Query().replace(mode=None), "mode"),
    (lambda: attnsel.Platform(3), "vendor"),
    (lambda: attnsel.Platform("cuda", 9.0), "arch"),
    (lambda: attnsel.Platform.cuda(9.5), "major"),
    (lambda: attnsel.Platform.cuda(9, "0"), "minor"),
    (lambda: attnsel.Platform.rocm(942), "arch"),
    (lambda: attnsel.Platform.cpu(components={"a": 1}), "components"),
    (lambda: attnsel.Platform.cpu(components=[b"aiter"]), "components"),
    (lambda: attnsel.Platform.cpu().has_component(3), "name"),
    (lambda: attnsel.OverrideSet(decoder=3), "decoder"),
    (lambda: attnsel.OverrideSet(source=None), "source"),
    (lambda: attnsel.OverrideSet().for_domain(0), "domain"),
    (lambda: attnsel.select(attnsel.reference_registry(), "q", attnsel.Platform.cpu()), "query"),
    (lambda: attnsel.select(None, attnsel.Query(), attnsel.Platform.cpu()), "registry"),
    (lambda: attnsel.explain(attnsel.reference_registry(), attnsel.Query(), {}), "platform"),
    (lambda: attnsel.select(attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cpu(), 3), "override"),
    (lambda: attnsel.builtin_catalog(None), "name"),
    (lambda: attnsel.load_catalog(3), "path"),
    (lambda: attnsel.parse_catalog(b"{}"), "text"),
    (lambda: attnsel.reference_registry().merge(3), "other"),
    (lambda: attnsel.to_json(3), "obj"),
    (lambda: attnsel.to_json(attnsel.Query(), indent="2"), "indent"),
    (lambda: attnsel.Query.from_json(3), "text"),
    (lambda: attnsel.Reason(code="dtype", message=3), "message"),
    (lambda: attnsel.Candidate(name="X", forced=1), "forced"),
    (lambda: attnsel.detect_platform(device_index="0", packages={}), "device_index"),
    (lambda: attnsel.detect_platform(extra_components="aiter", packages={}), "extra_components"),
    (lambda: attnsel.detect_platform(extra_components=[3], packages={}), "extra_components"),
    (lambda: attnsel.detect_platform(library_dirs="/x", packages={}), "library_dirs"),
    (lambda: attnsel.detect_platform(sysfs_root=3, packages={}), "sysfs_root"),
    (lambda: attnsel.detect_platform(environment=["A"], packages={}), "environment"),
    (lambda: attnsel.detect_platform(cudnn_loader_search="no", packages={}), "cudnn_loader_search"),
    (lambda: attnsel.detect_platform(packages=["flashinfer"]), "packages"),
])
def test_wrong_argument_types_raise_type_error_naming_the_argument(make, argument):
    with pytest.raises(TypeError) as info:
        make()
    assert str(info.value).startswith(argument + ":") or f"{argument}:" in str(info.value), str(info.value)
    assert "Unable to cast" not in str(info.value) and "incompatible" not in str(info.value)


@pytest.mark.parametrize("make, argument", [
    (lambda: attnsel.detect_platform(device_index=-1, packages={}), "device_index"),
    (lambda: attnsel.detect_platform(extra_components=["Bad Name"], packages={}), "extra_components"),
    (lambda: attnsel.detect_platform(sysfs_root="/sys\0x", packages={}), "sysfs_root"),
    (lambda: attnsel.detect_platform(packages={"_io": ["_io"]}, **QUIET), "packages"),
    (lambda: attnsel.Query(head_size=2**80), "head_size"),
    (lambda: attnsel.load_catalog("a\0b"), "path"),
])
def test_bad_argument_values_raise_value_error_naming_the_argument(make, argument):
    with pytest.raises(ValueError) as info:
        make()
    assert f"{argument}:" in str(info.value), str(info.value)


N = 4096  # limits::elements_per_list


@pytest.mark.parametrize("make", [
    lambda names: attnsel.Query(features=names),
    lambda names: attnsel.Query().replace(features=iter(names)),
    lambda names: attnsel.Platform.cpu(components=names),
    lambda names: attnsel.Platform.cpu(components=dict.fromkeys(names)),
    lambda names: attnsel.Platform.cpu().with_components(*names),
    lambda names: attnsel.detect_platform(extra_components=names, packages={}, sysfs_root="/nonexistent",
                                          proc_root="/nonexistent", rocm_roots=[], cuda_driver_libraries=[],
                                          cudnn_libraries=[], library_dirs=[]),
])
def test_collections_are_bounded_by_the_librarys_list_limit(make):
    names = [f"f{i}" for i in range(N + 1)]
    with pytest.raises(ValueError, match=f"more than {N} entries"):
        make(names)
    make(names[:N])  # exactly the limit is fine


def best_time(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("make", [
    lambda names: attnsel.Query(features=names),
    lambda names: attnsel.Platform.cpu(components=names),
])
def test_collections_scale_linearly_4x_input_is_not_16x_time(make):
    small = [f"name_{i:05d}" for i in range(1000)][::-1]  # reverse order: the worst case for sorted inserts
    large = [f"name_{i:05d}" for i in range(4000)][::-1]
    t1, t4 = best_time(lambda: make(small)), best_time(lambda: make(large))
    assert t4 < 8 * t1 + 0.002, (t1, t4)


# ---- errors: pickling, public names ------------------------------------------------------------------

def _raise_selection_error():
    attnsel.select(attnsel.reference_registry(), attnsel.Query(dtype="float32"), attnsel.Platform.cuda(9, 0),
                   "FLASH_ATTN")


def test_selection_error_pickles_and_survives_a_process_pool(reference, hopper):
    e = attnsel.select(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN", raise_on_error=False)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is attnsel.SelectionError and str(back) == str(e)
    assert (back.code, back.message, back.candidates, back.suggestions) == (e.code, e.message, e.candidates,
                                                                           e.suggestions)
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        with pytest.raises(attnsel.SelectionError) as info:
            pool.submit(_raise_selection_error).result(timeout=60)
    assert info.value.code == "backend_rejected" and info.value.candidates == e.candidates


def test_catalog_error_pickles():
    with pytest.raises(attnsel.CatalogError) as info:
        attnsel.parse_catalog("[]")
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is attnsel.CatalogError and back.pointer == info.value.pointer and str(back) == str(info.value)


@pytest.mark.parametrize("text", ['{"head_size": 64, "head_size": 128}', '{"features": ["a"], "features": []}'])
def test_query_from_json_refuses_repeated_keys(text):
    with pytest.raises(ValueError, match="head_size|features"):
        attnsel.Query.from_json(text)


def test_platform_from_json_refuses_repeated_keys():
    with pytest.raises(ValueError, match="vendor"):
        attnsel.Platform.from_json('{"vendor": "cuda", "vendor": "cpu"}')


# ---- values: compare, pickle, module-qualified repr, public names --------------------------------------

def test_value_types_compare_by_value_and_pickle(reference, hopper, mi300):
    e = attnsel.explain(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN")
    assert e.candidates == e.candidates and e.candidates[0].reasons == list(e.candidates[0].reasons)
    s = attnsel.select(reference, attnsel.Query(block_size=16, features={"sinks"}), mi300, "TRITON_ATTN,auto",
                       prefer=True)
    values = [s, e, attnsel.explain(reference, attnsel.Query(), mi300, attnsel.OverrideSet(decoder="TRITON_ATTN"),
                                    prefer=True),
              *e.candidates, *e.candidates[0].reasons]
    for value in values:
        back = pickle.loads(pickle.dumps(value))
        assert type(back) is type(value) and back == value and hash(back) == hash(value), value
        assert copy.deepcopy(value) == value
    back = pickle.loads(pickle.dumps(s))
    assert back.block_size_for(7) == s.block_size_for(7) and back.fallback == s.fallback
    ex = pickle.loads(pickle.dumps(e))
    assert attnsel.to_json(ex) == attnsel.to_json(e) and ex.result.code == e.result.code


def test_repr_names_the_module_and_round_trips_with_a_plain_import(reference, hopper):
    e = attnsel.explain(reference, attnsel.Query(dtype="float32"), hopper, "FLASH_ATTN")
    values = [
        attnsel.Query(), attnsel.Query(head_size=64, features={"sinks", "alibi"}, num_heads=8, mode="mla"),
        attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0"]), attnsel.Platform.rocm("gfx942"),
        attnsel.Platform.cpu(), attnsel.Platform("tpu"), attnsel.OverrideSet(decoder="FLASH_ATTN", source="env"),
        *e.candidates, *e.candidates[0].reasons,
    ]
    for value in values:
        assert repr(value).startswith("attnsel."), repr(value)
        assert eval(repr(value), {"attnsel": attnsel}) == value, repr(value)
    assert repr(attnsel.select(reference, attnsel.Query(), hopper)).startswith("<attnsel.Selection backend=")


def test_public_names_in_help_errors_and_pickles():
    for name in attnsel.__all__:
        obj = getattr(attnsel, name)
        if isinstance(obj, type) or callable(obj):
            assert obj.__module__ in ("attnsel", "attnsel.detect", "attnsel.plan"), (name, obj.__module__)
            assert "_attnsel" not in pydoc.render_doc(obj), name
    with pytest.raises(TypeError, match=r"attnsel\.Query, got str"):
        attnsel.select(attnsel.reference_registry(), "q", attnsel.Platform.cpu())
    assert b"_attnsel" not in pickle.dumps([attnsel.Query(), attnsel.Platform.cpu(), attnsel.OverrideSet()])


@pytest.mark.parametrize("arch", ["sm_100a", "sm_90a", "SM_121F", "compute_100a"])
def test_arch_specific_suffixes_are_refused_with_a_message(arch):
    with pytest.raises(ValueError, match="arch-specific target"):
        attnsel.Platform.cuda(arch)
    with pytest.raises(ValueError, match="arch-specific target"):
        attnsel.Platform("cuda", arch)
    with pytest.raises(ValueError, match="arch-specific target"):
        attnsel.Platform.from_json('{"vendor": "cuda", "arch": "%s"}' % arch)


# ---- detect_platform never raises for what it finds ------------------------------------------------

QUIET = dict(sysfs_root="/nonexistent", proc_root="/nonexistent", rocm_roots=[], cuda_driver_libraries=[],
             cudnn_libraries=[], library_dirs=[], environment={})


@pytest.mark.parametrize("metadata, expected", [
    ("", ""),                                                   # an empty METADATA: no Version at all
    ("Metadata-Version: 2.1\nName: oddpkg\nVersion: 1.99999999999999999999\n", ""),  # a part past 10**9
    ("Metadata-Version: 2.1\nName: oddpkg\nVersion: 1.2.3.4.5\n", "1.2.3.4"),
    ("Metadata-Version: 2.1\nName: oddpkg\nVersion: 2.0rc1\n", "2.0"),
    ("Metadata-Version: 2.1\nName: oddpkg\nVersion: \xff\xfe\n", ""),
])
def test_detect_platform_reports_odd_packages_as_facts(tmp_path, monkeypatch, metadata, expected):
    import importlib
    (tmp_path / "oddpkg").mkdir()
    (tmp_path / "oddpkg" / "__init__.py").write_text("")
    info = tmp_path / "oddpkg-1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(metadata, encoding="utf-8", errors="surrogateescape")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    d = attnsel.detect_platform(packages={"oddpkg": ("oddpkg",)}, **QUIET)
    fact = d.find("package.oddpkg")
    assert fact.found and fact.value == expected, fact
    assert d.platform.components.get("oddpkg", "absent") == (expected or None)


@pytest.mark.parametrize("fifo", ["oddpkg-1.dist-info/METADATA", "torch/version.py"])
def test_detect_platform_never_blocks_on_a_fifo_among_the_package_files(tmp_path, fifo):
    """A METADATA or torch/version.py that is a FIFO is a fact (unreadable), never a read that waits for a
    writer: the run is in a child process with a time limit, so a regression fails here instead of hanging."""
    for package in ("oddpkg", "torch"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "oddpkg-1.dist-info").mkdir()
    (tmp_path / "oddpkg-1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: oddpkg\nVersion: 1.0\n")
    (tmp_path / "torch" / "version.py").write_text("cuda = '12.8'\n")
    (tmp_path / fifo).unlink()
    os.mkfifo(tmp_path / fifo)
    quiet = {k: v for k, v in QUIET.items() if k != "library_dirs"}  # None: the torch probe runs
    result = run_python(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import attnsel
        d = attnsel.detect_platform(packages={{"oddpkg": ("oddpkg",)}}, **{quiet!r})
        print(d.find("package.oddpkg"))
        print(d.find("torch.cuda_runtime"))
    """, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    if fifo.endswith("METADATA"):
        assert "unreadable: OSError" in result.stdout and "12.8" in result.stdout, result.stdout
    else:
        assert "not a regular file" in result.stdout and "1.0" in result.stdout, result.stdout


def test_detect_platform_options_are_one_list():
    """The C++ half's list of options is detect_platform()'s keywords (plus the Python-only `packages`)."""
    import inspect
    from attnsel import _attnsel
    params = set(inspect.signature(attnsel.detect_platform).parameters)
    assert params == set(_attnsel._DETECT_OPTIONS) | {"packages"}


# ---- a generator over the constructors' argument space -----------------------------------------------

# The pool's values, built once (a registry per draw would dominate the run).
POOL = [None, True, False, 0, -1, 1, 7, 64, 2**31, 2**64, -2**63, 1.5, float("nan"), "", "x", "sinks",
        "bf16", "dtype", "rejected", "Bad Name", "9.0", "sm_90", "sm_100a", "gfx942", "cuda", "a=1.2", "a=x", "\0", "\ud800",
        "é" * 70, b"bytes", object(), attnsel.Query(), attnsel.Platform.cpu(), attnsel.Platform.cuda(9, 0),
        "decode", "prefill", 4096, attnsel.reference_registry(), attnsel.OverrideSet(decoder="FLASH_ATTN")]
REFERENCE, HOPPER = attnsel.reference_registry(), attnsel.Platform.cuda(9, 0)


def random_value(rng, depth=0):
    choices = list(POOL)
    if depth < 2:
        choices += [[random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))],
                    {rng.choice(["aiter", "k", "Bad Name", "x=1"]): random_value(rng, depth + 1)
                     for _ in range(rng.randint(0, 2))},
                    frozenset(["alibi", "sinks"]), iter(["dcp"])]
    return rng.choice(choices)


REQUIRED = {"Platform": {"vendor"}, "Platform.cuda": {"major"}, "Platform.rocm": {"arch"}, "Reason": {"code", "message"},
            "Candidate": {"name"}, "Platform.with_device_name": {"name"}}

CONSTRUCTORS = {
    "Query": (attnsel.Query, ["head_size", "head_size_v", "dtype", "kv_cache_dtype", "block_size", "attn_type",
                              "mode", "domain", "num_heads", "features", "head_sz", "phase", "seq_len_q", "seq_len_kv",
                              "batch_size", "num_kv_heads"]),
    "Query.replace": (lambda **kw: attnsel.Query().replace(**kw), ["head_size", "features", "dtype", "x"]),
    "Platform": (lambda **kw: attnsel.Platform(**kw), ["vendor", "arch", "components"]),
    "Platform.cuda": (lambda **kw: attnsel.Platform.cuda(**kw), ["major", "minor", "components"]),
    "Platform.rocm": (lambda **kw: attnsel.Platform.rocm(**kw), ["arch", "components"]),
    "Platform.cpu": (lambda **kw: attnsel.Platform.cpu(**kw), ["components", "arch"]),
    "Platform.with_components": (lambda **kw: attnsel.Platform.cuda(9, 0).with_components(*kw.values()),
                                 ["spec1", "spec2", "spec3"]),
    "Platform.with_device_name": (lambda **kw: attnsel.Platform.cuda(9, 0).with_device_name(**kw), ["name"]),
    "OverrideSet": (attnsel.OverrideSet, ["decoder", "encoder", "source", "prefill", "decode", "drafter", "linear"]),
    # A valid registry and platform unless the draw replaces them: otherwise nearly every draw fails on them.
    "Selector": (lambda **kw: attnsel.Selector(**{"registry": REFERENCE, "platform": HOPPER, **kw}),
                 ["registry", "platform", "override", "prefer", "refuse_advisories", "cache", "cache_slots"]),
    "Reason": (attnsel.Reason, ["code", "message"]),
    "Candidate": (attnsel.Candidate, ["name", "variant", "rank", "verdict", "forced", "reasons"]),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_random_constructor_arguments_raise_only_type_or_value_errors(name, reference, hopper):
    make, keywords = CONSTRUCTORS[name]
    rng = random.Random(zlib.crc32(name.encode()))
    built = 0
    for _ in range(1500):
        kw = {k: random_value(rng) for k in rng.sample(keywords, rng.randint(0, len(keywords)))}
        try:
            value = make(**kw)
        except (TypeError, ValueError) as e:
            assert "Unable to cast" not in str(e), (kw, e)
            # pybind11 words a missing required keyword itself; every other refusal names the argument.
            assert "incompatible" not in str(e) or not REQUIRED.get(name, set()) <= set(kw), (kw, e)
            continue
        built += 1
        repr(value)
        if isinstance(value, attnsel.Selector):  # bound state, not a value: it selects
            value.select(attnsel.Query(), raise_on_error=False)
            value.explain(attnsel.Query(head_size=64, phase="decode", seq_len_q=1))
            continue
        # Whatever was built is a whole value: it prints, hashes, pickles and (for queries) selects.
        assert pickle.loads(pickle.dumps(value)) == value
        hash(value)
        if isinstance(value, attnsel.Query):
            attnsel.select(reference, value, hopper, raise_on_error=False)
    assert built > 0


def test_the_query_field_table_covers_every_json_key():
    """Query's one table of fields (python/src/query.cpp) names every key the C++ writer puts in a query's
    JSON: a field added to attnsel::query and its JSON without a table row fails here."""
    import json
    fields = {name for name in dir(attnsel.Query) if not name.startswith("_")} - {"replace", "from_json",
                                                                                  "from_model_config"}
    written = set(json.loads(attnsel.to_json(attnsel.Query(head_size=64, head_size_v=32, block_size=16,
                                                           num_heads=8, features={"sinks"}))))
    assert written == fields, (written - fields, fields - written)
    q = attnsel.Query(head_size=64, head_size_v=32, block_size=16, num_heads=8, features={"sinks"}, mode="mla")
    assert attnsel.Query.from_json(attnsel.to_json(q)) == q
