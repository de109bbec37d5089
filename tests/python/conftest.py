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
