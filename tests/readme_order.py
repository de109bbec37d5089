#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Runs README.md's fresh-machine blocks in the order written, on this checkout, and checks what they leave.
"""Usage: tests/readme_order.py [--prefix DIR] [--list]

The blocks are the `sh` fences of README.md's "Build and test on a fresh Debian 12 machine" section
marked `doc-test: skip machine: ...` (doc_examples.py leaves those to this script), in file order: the
main job (scripts/run.sh), the install into a prefix, the Python module from the build tree, the wheel in
a fresh virtual environment. Each runs as written in `bash -eo pipefail` from the repository root; the
install lands in --prefix (the block reads $PREFIX). The wheel block's module is built unoptimised
(CMAKE_ARGS, which setup.py documents): it is checked for building, installing and importing, not speed.
Afterwards the prefix must hold the headers, the CMake package, attnsel.pc and the CLI.
Exit status 0 when every block passed and the checks hold, 1 otherwise, 2 for a usage error.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SECTION = "## Build and test on a fresh Debian 12 machine"
MARKER = re.compile(r"^<!--\s*doc-test:\s*skip machine:.*-->\s*$")
INSTALLED = ["include/attnsel/attnsel.hpp", "include/attnsel/all.hpp", "include/attnsel/core/select.hpp",
             "include/attnsel/selector.hpp", "include/attnsel/generated/catalog_tables.hpp",
             "lib/cmake/attnsel/attnselConfig.cmake", "lib/pkgconfig/attnsel.pc", "bin/attnsel"]


def blocks(readme: pathlib.Path):
    text = readme.read_text().splitlines()
    try:
        start = text.index(SECTION)
    except ValueError:
        raise SystemExit(f"readme_order: {readme} has no section '{SECTION}'")
    end = next((i for i in range(start + 1, len(text)) if text[i].startswith("## ")), len(text))
    out, i = [], start
    while i < end:
        if MARKER.match(text[i]) and i + 1 < end and text[i + 1].strip() == "```sh":
            j = i + 2
            while j < end and text[j].strip() != "```":
                j += 1
            out.append((i + 2, "\n".join(text[i + 2:j])))
            i = j
        i += 1
    if len(out) < 4:
        raise SystemExit(f"readme_order: expected the main job, install, module and wheel blocks, found {len(out)}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", help="install prefix for the install block (default: a new temporary folder)")
    ap.add_argument("--list", action="store_true", help="print the blocks and exit")
    args = ap.parse_args()
    found = blocks(ROOT / "README.md")
    if args.list:
        for line, code in found:
            print(f"README.md:{line}:\n{code}\n")
        return 0
    prefix = pathlib.Path(args.prefix or tempfile.mkdtemp(prefix="attnsel-readme-"))
    env = dict(os.environ, PREFIX=str(prefix))
    env.setdefault("CMAKE_ARGS", "-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g0")
    failed = passed = 0
    for line, code in found:
        print(f"readme_order: README.md:{line}: {code.splitlines()[0]}", flush=True)
        began = time.monotonic()
        status = subprocess.run(["bash", "-eo", "pipefail", "-c", code], cwd=ROOT, env=env,
                                stdout=sys.stdout, stderr=sys.stderr).returncode
        print(f"readme_order: README.md:{line}: exit {status} ({time.monotonic() - began:.0f} s)", flush=True)
        if status != 0:
            failed += 1
            break  # later blocks build on this one
        passed += 1
    if not failed:
        missing = [f for f in INSTALLED if not (prefix / f).exists()]
        if missing:
            print(f"readme_order: the install left no {', '.join(missing)} under {prefix}", file=sys.stderr)
            failed += 1
    print(f"readme_order: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
