# SPDX-License-Identifier: Apache-2.0
# pyproject.toml's version is the library's (include/attnsel/config.hpp, read by CMake and the module).
import os
import pathlib
import re

import attnsel

ROOT = pathlib.Path(os.environ.get("ATTNSEL_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def test_pyproject_version_is_the_library_version():
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
    assert match, "pyproject.toml has no version line"
    assert match.group(1) == attnsel.__version__
