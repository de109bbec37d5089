# SPDX-License-Identifier: Apache-2.0
# attnsel.detect_platform(): the C++ probes behind fake trees and fake runtimes, plus the Python-only probes.
import importlib.metadata
import importlib.util
import os

import pytest

import attnsel
from attnsel import detect as detect_module

FAKE_CUDA = os.environ.get("ATTNSEL_FAKE_CUDA")
FAKE_CUDA_NODEV = os.environ.get("ATTNSEL_FAKE_CUDA_NODEV")
FAKE_TORCH_LIB = os.environ.get("ATTNSEL_FAKE_TORCH_LIB")
needs_fakes = pytest.mark.skipif(not FAKE_CUDA, reason="the fake runtimes come with the C++ test suite's build")


@pytest.fixture
def tree(tmp_path):
    """Roots that see only a temporary tree: no real driver, cuDNN, KFD topology or environment."""
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2\n")

    def kfd_node(node, gfx_target_version):
        d = tmp_path / "sys" / "class" / "kfd" / "kfd" / "topology" / "nodes" / str(node)
        d.mkdir(parents=True)
        (d / "properties").write_text(f"cpu_cores_count 0\nsimd_count 1216\ngfx_target_version {gfx_target_version}\n")

    def options(**kw):
        base = dict(
            sysfs_root=str(tmp_path / "sys"),
            proc_root=str(tmp_path / "proc"),
            rocm_roots=[str(tmp_path / "opt" / "rocm")],
            cuda_driver_libraries=[str(tmp_path / "no" / "libcuda.so.1")],
            cudnn_libraries=["libcudnn.so.9"],
            library_dirs=[str(tmp_path / "no_lib")],
            environment={},
            cudnn_loader_search=False,
            packages={},
        )
        base.update(kw)
        return base

    tree.kfd_node = kfd_node
    tree.options = options
    tree.path = tmp_path
    return tree


def test_without_a_gpu_detection_says_so_and_lists_cpu_facts(tree):
    d = attnsel.detect_platform(**tree.options())
    assert isinstance(d, attnsel.Detection)
    assert d.platform.vendor == "cpu"
    gpu = d.find("gpu")
    assert gpu is not None and not gpu.found
    assert gpu.source == "none found: checked the CUDA driver and the KFD topology"
    assert d.find("cuda.driver").source.startswith("not found: " + str(tree.path / "no" / "libcuda.so.1"))
    assert all(isinstance(f, attnsel.DetectedFact) for f in d.facts)
    if d.find("cpu.arch").value == "x86_64":
        assert "cpu_avx2" in d.platform.components
        assert d.find("cpu.avx2").source.endswith("cpuinfo flags") or "cpuinfo" in d.find("cpu.avx2").source
    text = str(d)
    assert text.startswith("platform: ") and "none found" in text


def test_amd_gpu_from_kfd_topology_with_rocm_version(tree):
    tree.kfd_node(0, 0)
    tree.kfd_node(1, 90402)
    (tree.path / "opt" / "rocm" / ".info").mkdir(parents=True)
    (tree.path / "opt" / "rocm" / ".info" / "version").write_text("6.2.0-66\n")
    d = attnsel.detect_platform(**tree.options())
    assert d.platform.vendor == "rocm" and d.platform.arch == "gfx942"
    assert "KFD topology node 1 gfx_target_version 90402" in d.find("rocm.gfx").source
    assert d.platform.components["rocm"] == "6.2.0"


def test_aiter_switch_needs_the_package_and_the_catalog_closes_aiter_mha(tree):
    """vLLM: VLLM_ROCM_USE_AITER=1 means nothing without the aiter package (is_aiter_found_and_supported)."""
    tree.kfd_node(1, 90402)
    env = {"VLLM_ROCM_USE_AITER": "1"}
    without = attnsel.detect_platform(**tree.options(environment=env))
    assert "aiter_mha" not in without.platform.components
    with_pkg = attnsel.detect_platform(**tree.options(environment=env, extra_components=["aiter=0.1.5"]))
    comps = with_pkg.platform.components
    assert {"aiter_enabled", "aiter_mha", "aiter_mla"} <= set(comps)
    reg = attnsel.reference_registry()
    q = attnsel.Query(head_size=80, dtype="bfloat16", domain="encoder")
    assert attnsel.select(reg, q, with_pkg.platform).backend == "ROCM_AITER_FA"
    assert attnsel.select(reg, q, without.platform).backend != "ROCM_AITER_FA"


@needs_fakes
def test_fake_libcuda_and_cudnn_hint_give_the_h200_shape(tree):
    d = attnsel.detect_platform(**tree.options(cuda_driver_libraries=[FAKE_CUDA], library_dirs=[FAKE_TORCH_LIB]))
    assert d.platform.vendor == "cuda" and d.platform.capability == (9, 0)
    assert d.platform.components["cudnn"] == "9.19.0"
    assert "cudnn_preferred" in d.platform.components  # cuDNN > 9.15 on sm90, not deprioritized
    assert d.find("cudnn.version").source.startswith("cudnnGetVersion via " + FAKE_TORCH_LIB)
    off = attnsel.detect_platform(
        **tree.options(
            cuda_driver_libraries=[FAKE_CUDA],
            library_dirs=[FAKE_TORCH_LIB],
            environment={"TORCH_CUDNN_SDPA_DEPRIORITIZED": "1"},
        )
    )
    assert "cudnn_preferred" not in off.platform.components
    second = attnsel.detect_platform(
        **tree.options(cuda_driver_libraries=[FAKE_CUDA], library_dirs=[FAKE_TORCH_LIB], device_index=1)
    )
    assert second.platform.capability == (8, 6)


@needs_fakes
def test_a_broken_driver_is_a_fact_not_an_exception(tree):
    d = attnsel.detect_platform(**tree.options(cuda_driver_libraries=[FAKE_CUDA_NODEV]))
    assert d.platform.vendor == "cpu"
    assert "returned 100" in d.find("cuda.driver").source or any("returned 100" in f.source for f in d.facts)


def test_packages_are_components_with_versions_and_facts(tree, monkeypatch):
    real_find, real_distribution = importlib.util.find_spec, importlib.metadata.distribution

    def find_spec(name, *a):
        return object() if name in ("flashinfer", "aiter") else real_find(name, *a)

    class Installed:  # a distribution as importlib.metadata.distribution() returns it (no files behind it)
        version = "0.2.5.post1"

    def distribution(dist):
        if dist == "flashinfer-python":
            return Installed()
        if dist in ("amd-aiter", "aiter"):
            raise importlib.metadata.PackageNotFoundError(dist)
        return real_distribution(dist)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    d = attnsel.detect_platform(**tree.options(packages=detect_module.PYTHON_PACKAGES))
    comps = d.platform.components
    assert comps["flashinfer"] == "0.2.5" and comps["aiter"] is None
    assert "importlib.metadata.version('flashinfer-python') = '0.2.5.post1'" in d.find("package.flashinfer").source
    assert d.find("package.aiter").found and d.find("package.aiter").value == ""
    flash_attn = d.find("package.flash_attn")
    assert flash_attn is not None and not flash_attn.found and flash_attn.source.startswith("not found: ")
    assert d.find("component.flashinfer") is not None  # the C++ side records the caller's components
    assert detect_module.python_components() == {"flashinfer": "0.2.5", "aiter": None}


def test_default_cudnn_hint_is_the_installed_torch_lib_directory(tree, monkeypatch):
    opts = tree.options()
    del opts["library_dirs"]
    d = attnsel.detect_platform(**opts)
    fact = d.find("torch.lib_dir")
    assert fact is not None
    spec = importlib.util.find_spec("torch")
    if spec is None:
        assert not fact.found
    else:
        assert fact.found and fact.value == os.path.join(list(spec.submodule_search_locations)[0], "lib")


def test_bad_arguments_are_value_and_type_errors(tree):
    with pytest.raises(ValueError, match="extra_components: 'Bad Name=x'"):
        attnsel.detect_platform(**tree.options(extra_components=["Bad Name=x"]))
    with pytest.raises(TypeError):
        attnsel.detect_platform(**tree.options(extra_components="aiter"))
    with pytest.raises(ValueError, match="device_index"):
        attnsel.detect_platform(**tree.options(device_index=-1))


def test_detection_on_this_machine_never_raises():
    d = attnsel.detect_platform()
    assert d.platform.vendor in attnsel.VENDORS
    assert d.find("cpu.arch") is not None


def test_the_cudnn_fact_is_what_the_loader_finds_stated_either_way():
    """A machine may carry a real cuDNN on the loader's path (the CUDA toolkit's) or none: ask the loader
    first, then expect that answer, so neither kind of machine changes what is checked."""
    import ctypes

    try:
        loadable = hasattr(ctypes.CDLL("libcudnn.so.9"), "cudnnGetVersion")
    except OSError:
        loadable = False
    d = attnsel.detect_platform(packages={})
    fact = d.find("cudnn.version")
    assert fact is not None and fact.found == loadable, fact
    assert ("cudnn" in d.platform.components) == loadable
    # Told not to search the loader's path, it finds none, whatever the machine has.
    hermetic = attnsel.detect_platform(cudnn_loader_search=False, packages={})
    off = hermetic.find("cudnn.version")
    assert off is None or not off.found
    assert "cudnn" not in hermetic.platform.components


def test_sdpa_catalog_names_the_catalog_of_each_torch_release():
    from attnsel.detect import sdpa_catalog

    assert sdpa_catalog("2.11.0+cu130") == "torch_sdpa"
    assert sdpa_catalog("2.13.1") == "torch_sdpa"
    assert sdpa_catalog("2.14.0+cu130") == "torch_sdpa@2.14.0"
    assert sdpa_catalog("2.15.0.dev20261201") == "torch_sdpa@2.14.0"
    assert sdpa_catalog("3.0") == "torch_sdpa@2.14.0"
    for name in ("torch_sdpa", "torch_sdpa@2.14.0"):
        assert attnsel.builtin_catalog(name).name == name
    with pytest.raises(ValueError, match="torch version: 'nightly' does not start with a version"):
        sdpa_catalog("nightly")
