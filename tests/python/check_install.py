#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# ctest python_install: `cmake --install` of the python component into a temporary prefix, then import it from there.
"""Usage: check_install.py CMAKE BUILD_DIR INSTALL_DIR (INSTALL_DIR relative to the prefix)."""
import os
import pathlib
import subprocess
import sys
import tempfile


def main() -> int:
    cmake, build, rel = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run([cmake, "--install", build, "--prefix", prefix, "--component", "python"], check=True,
                       stdout=subprocess.DEVNULL)
        site = pathlib.Path(prefix) / rel
        installed = sorted(p.name for p in (site / "attnsel").iterdir())
        for name in ("__init__.py", "__init__.pyi", "detect.py", "torch.py", "torch.pyi", "py.typed"):
            assert name in installed, f"{name} not installed: {installed}"
        assert any(n.startswith("_attnsel") and n.endswith((".so", ".pyd")) for n in installed), installed
        engines = sorted(p.name for p in (site / "attnsel" / "engines").iterdir())
        assert engines == ["__init__.py", "sglang.py", "vllm.py"], engines
        # A clean interpreter (no build tree on the path, run from elsewhere) imports the installed copy.
        code = ("import attnsel, sys; assert attnsel.__file__.startswith(sys.argv[1]), attnsel.__file__; "
                "s = attnsel.select(attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cuda(9, 0)); "
                "import attnsel.engines.sglang; print(attnsel.__file__, s.backend)")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = str(site)
        out = subprocess.run([sys.executable, "-c", code, str(site)], check=True, env=env, cwd=prefix,
                             capture_output=True, text=True).stdout
        print(out.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
