# SPDX-License-Identifier: Apache-2.0
# pytest set-up for the Python suites: the source tree, and fixtures shared by several files.
import os
import pathlib

import pytest

import attnsel

SOURCE_DIR = pathlib.Path(os.environ.get("ATTNSEL_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR


@pytest.fixture(scope="session")
def reference() -> attnsel.Registry:
    return attnsel.reference_registry()


@pytest.fixture(scope="session")
def mi300() -> attnsel.Platform:
    return attnsel.Platform.rocm("gfx942", components=["aiter"])


@pytest.fixture(scope="session")
def hopper() -> attnsel.Platform:
    return attnsel.Platform.cuda(9, 0)


@pytest.fixture
def switch_spy(monkeypatch):
    """Records, for every SDPA kernel call attnsel.torch's routing makes, which of torch's backend switches
    (flash, mem_efficient, math, cudnn) were on: a sorted list per call. Needs torch."""
    import torch

    import attnsel.torch as at

    getters = {name: getattr(torch._C, f"_get_{name}_sdp_enabled") for name in ("flash", "mem_efficient", "math", "cudnn")}
    seen = []
    real = at._sdpa

    def spy(*args, **kwargs):
        seen.append(sorted(n for n, get in getters.items() if get()))
        return real(*args, **kwargs)

    monkeypatch.setattr(at, "_sdpa", spy)
    yield seen


@pytest.fixture
def cpu_math_registry(tmp_path) -> attnsel.Registry:
    """torch_sdpa with an overlay that puts MATH first on the CPU (both domains), merged from a file."""
    import json

    rules = [{"domain": d, "vendor": "cpu", "order": ["MATH"]} for d in ("decoder", "encoder")]
    overlay = tmp_path / "math.json"
    overlay.write_text(json.dumps({"format": "attnsel-catalog", "version": 1, "name": "math", "backends": [],
                                   "policies": rules}))
    reg = attnsel.torch_sdpa_registry()
    reg.merge(str(overlay))
    return reg
