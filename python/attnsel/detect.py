# SPDX-License-Identifier: Apache-2.0
# attnsel.detect_platform(): the C++ detection plus what only Python can see (packages, torch's cuDNN).
"""Platform detection from Python: the machine as attnsel sees it, each fact with its source.

The C++ probes (<attnsel/detect/detect.hpp>: CUDA driver, cuDNN, KFD topology, CPU ISA, engine switches) run
inside the extension; this module adds the importable Python packages (PYTHON_PACKAGES) as components
before the engine switches are evaluated, and points the cuDNN probe at the lib directory of the
installed torch, so the cuDNN version is the one torch loads. Nothing here imports torch.
"""

import dataclasses
import errno
import importlib.metadata
import importlib.util
import os
import re
import stat
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ._attnsel import _DETECT_OPTIONS, Platform, _detect

__all__ = ["PYTHON_PACKAGES", "Detection", "DetectedFact", "detect_platform", "python_components", "sdpa_catalog"]

#: Python packages reported as platform components: component name -> distribution names to ask
#: importlib.metadata for the version (the first one installed wins). The components are those the
#: built-in catalogs name (catalog/vllm@0.33.0.json: flashinfer, flash_attn, aiter).
PYTHON_PACKAGES: Dict[str, Tuple[str, ...]] = {
    "flashinfer": ("flashinfer-python", "flashinfer"),
    "flash_attn": ("flash-attn", "flash_attn", "vllm-flash-attn"),
    "aiter": ("amd-aiter", "aiter"),
}


@dataclasses.dataclass(frozen=True)
class DetectedFact:
    """One thing detection learned, or failed to learn, and how (detected_fact in C++)."""

    name: str  #: 'cuda.capability', 'cudnn.version', 'package.flashinfer', ...
    value: str  #: '9.0', '9.19.0'; empty when not found
    source: str  #: 'cuDeviceGetAttribute via libcuda.so.1', 'not found: importlib.util.find_spec(...)'
    found: bool


@dataclasses.dataclass(frozen=True)
class Detection:
    """A detected Platform and every fact, in the order the probes ran."""

    platform: Platform
    facts: Tuple[DetectedFact, ...]

    def find(self, name: str) -> Optional[DetectedFact]:
        """The first fact named `name` that was found, else the first of that name, else None."""
        named = [f for f in self.facts if f.name == name]
        return next((f for f in named if f.found), named[0] if named else None)

    def __str__(self) -> str:
        width = max((len(f.name) for f in self.facts), default=0)
        lines = [f"platform: {self.platform!r}"]
        for f in self.facts:
            value = f.value if f.found else "-"
            lines.append(f"  {f.name:<{width}}  {value}  ({f.source})")
        return "\n".join(lines)


def _numeric_version(text: object) -> Optional[str]:
    """The leading dotted version (at most 4 parts, each below 10**9, as components take), else None."""
    if not isinstance(text, str):
        return None
    match = re.match(r"\d+(\.\d+){0,3}", text)
    if match is None or any(len(part) > 9 for part in match.group(0).split(".")):
        return None
    return match.group(0)


#: The built-in catalogs of PyTorch SDPA, newest first: (first release it models, catalog name).
_SDPA_CATALOGS: Tuple[Tuple[Tuple[int, ...], str], ...] = (((2, 14), "torch_sdpa@2.14.0"), ((0,), "torch_sdpa"))


def sdpa_catalog(torch_version: str) -> str:
    """The built-in catalog that models this PyTorch release's SDPA selection: 'torch_sdpa@2.14.0' from
    2.14 on, else 'torch_sdpa' (2.11's rules; 2.12 and 2.13 were not checked). `torch_version` is
    torch.__version__ ('2.14.0+cu130'); a text that does not start with a version raises ValueError."""
    numeric = _numeric_version(torch_version)
    if numeric is None:
        raise ValueError(f"torch version: {torch_version!r:.60} does not start with a version such as 2.14.0")
    parts = tuple(int(x) for x in numeric.split("."))
    return next(name for first, name in _SDPA_CATALOGS if parts >= first)


def _find_spec(module: str):
    # Detection never raises for what it finds: a broken package is "not found", whatever it raises.
    try:
        return importlib.util.find_spec(module)
    except Exception:  # noqa: BLE001
        return None


def _read_regular(path: str, limit: int) -> str:
    """Up to `limit` bytes of the regular file `path` as UTF-8 text. The open never blocks: a FIFO, a device
    or a directory is an OSError (as the C++ probes refuse them), never a read that waits for a writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return f.read(limit).decode("utf-8", errors="replace")


def _metadata_files_readable(dist: "importlib.metadata.Distribution") -> None:
    """Raises OSError when the distribution's metadata file is there but is not a regular file. A file
    distribution keeps its dist-info / egg-info folder, or its single egg-info file, in `_path` (CPython's
    name since 3.8); importlib would read it with a blocking open, which never returns on a FIFO."""
    folder = getattr(dist, "_path", None)
    if folder is None:
        return
    mode = os.stat(str(folder)).st_mode
    if not stat.S_ISDIR(mode):  # a single-file egg-info is the metadata itself
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(folder))
        return
    for name in ("METADATA", "PKG-INFO"):
        path = os.path.join(str(folder), name)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", path)


def _distribution_version(dist: str) -> Tuple[bool, object]:
    """(installed, version text or whatever METADATA gave); an unreadable distribution is not installed."""
    try:
        found = importlib.metadata.distribution(dist)
        _metadata_files_readable(found)
        return True, found.version
    except importlib.metadata.PackageNotFoundError:
        return False, None
    except Exception as e:  # noqa: BLE001 - a broken METADATA is a fact, not an error
        return True, f"<unreadable: {type(e).__name__}>"


def _package_facts(packages: Mapping[str, Sequence[str]]) -> List[DetectedFact]:
    facts = []
    for component, distributions in packages.items():
        probe = f"importlib.util.find_spec('{component}')"
        if _find_spec(component) is None:
            facts.append(DetectedFact(f"package.{component}", "", f"not found: {probe}", False))
            continue
        version, source = None, f"{probe}; no version: none of {', '.join(distributions)} is an installed distribution"
        for dist in distributions:
            installed, text = _distribution_version(dist)
            if not installed:
                continue
            version = _numeric_version(text)
            source = f"{probe}; importlib.metadata.version('{dist}') = {text!r}"
            if version is None:
                source += " (not a dotted version of at most 4 parts below 10**9: reported without a version)"
            break
        facts.append(DetectedFact(f"package.{component}", version or "", source, True))
    return facts


def _found(facts: Iterable[DetectedFact]) -> Dict[str, Optional[str]]:
    """Component name -> version (None when unknown) of the packages the facts found."""
    return {f.name[len("package.") :]: (f.value or None) for f in facts if f.found}


def python_components(packages: Optional[Mapping[str, Sequence[str]]] = None) -> Dict[str, Optional[str]]:
    """The PYTHON_PACKAGES (or `packages`) that are importable, with their dotted numeric version when known."""
    return _found(_package_facts(PYTHON_PACKAGES if packages is None else packages))


def _torch_lib_dir() -> Tuple[Optional[str], DetectedFact]:
    spec = _find_spec("torch")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None, DetectedFact("torch.lib_dir", "", "not found: importlib.util.find_spec('torch')", False)
    lib = os.path.join(locations[0], "lib")
    return lib, DetectedFact("torch.lib_dir", lib, "importlib.util.find_spec('torch') (cuDNN hint; torch not imported)", True)


def _torch_cuda_runtime(torch_dir: str) -> DetectedFact:
    """torch's CUDA build (`torch.version.cuda`) read from torch/version.py, without importing torch.

    Reported as the component cuda_runtime=<version> (the sglang catalog's FA3 needs 12.3)."""
    path = os.path.join(torch_dir, "version.py")
    try:
        text = _read_regular(path, 65536)
    except OSError as e:
        return DetectedFact("torch.cuda_runtime", "", f"not found: {path} ({e.strerror})", False)
    match = re.search(r"^cuda\s*(?::[^=\n]*)?=\s*['\"](\d+(?:\.\d+){0,3})['\"]", text, re.MULTILINE)
    if match is None:
        return DetectedFact("torch.cuda_runtime", "", f"not found: no CUDA version in {path} (a CPU or ROCm build)", False)
    return DetectedFact("torch.cuda_runtime", match.group(1), f"{path}: cuda = '{match.group(1)}' (torch not imported)", True)


def detect_platform(
    *,
    device_index: int = 0,
    library_dirs: Optional[Iterable[str]] = None,
    packages: Optional[Mapping[str, Sequence[str]]] = None,
    extra_components: Iterable[str] = (),
    environment: Optional[Mapping[str, str]] = None,
    sysfs_root: Optional[str] = None,
    proc_root: Optional[str] = None,
    rocm_roots: Optional[Iterable[str]] = None,
    cuda_driver_libraries: Optional[Iterable[str]] = None,
    cudnn_libraries: Optional[Iterable[str]] = None,
    cudnn_loader_search: bool = True,
    switch_table: Optional[str] = None,
) -> Detection:
    """Detects this machine: the GPU (CUDA driver, else KFD topology), cuDNN, ROCm, CPU ISA, Python
    packages and engine switches, as a Detection (platform + facts with their sources). Never raises for
    what it finds: a missing or broken library is a fact. ValueError only for a malformed argument.

    library_dirs: where to look for cuDNN first; None: the installed torch's lib directory (found
    without importing torch), so the version is the one torch loads. packages: component -> distribution
    names (default PYTHON_PACKAGES); {} skips the package probe. extra_components: 'name' or
    'name=version' added as the caller's facts. environment: the variables engine switches and
    CUDA_VISIBLE_DEVICES are read from (None: this process's). The roots and library lists replace
    the C++ defaults (docs/detection.md) and exist for tests and unusual installs.
    """
    arguments = dict(locals())  # the keywords above, read by the C++ half's list of options
    if packages is None:
        packages = PYTHON_PACKAGES
    elif not isinstance(packages, Mapping) or not all(
        isinstance(k, str) and not isinstance(v, str) and all(isinstance(d, str) for d in v) for k, v in packages.items()
    ):
        raise TypeError("packages: expected a mapping of component name to a sequence of distribution names")
    facts: List[DetectedFact] = []
    runtime: List[str] = []
    if library_dirs is None:
        lib, fact = _torch_lib_dir()
        facts.append(fact)
        library_dirs = [lib] if lib else []
        if lib:  # the installed torch: its CUDA build is the component cuda_runtime
            cuda = _torch_cuda_runtime(os.path.dirname(lib))
            facts.append(cuda)
            runtime = [f"cuda_runtime={cuda.value}"] if cuda.found else []
    package_facts = _package_facts(packages)
    facts.extend(package_facts)
    specs = runtime + [name + (f"={version}" if version else "") for name, version in _found(package_facts).items()]
    # Every option goes to the C++ half as given, which checks each (errors name the argument) against
    # its one list of options, _DETECT_OPTIONS; only `packages` is Python's alone.
    given = {name: arguments[name] for name in _DETECT_OPTIONS}
    given["library_dirs"] = library_dirs
    platform, native = _detect(given, specs)
    facts.extend(DetectedFact(*f) for f in native)
    return Detection(platform, tuple(facts))
