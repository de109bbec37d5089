#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# ctest python_install: `cmake --install` of the python component where each target interpreter imports from.
"""Usage: check_install.py CMAKE BUILD_DIR (run with the interpreter the module was built for).

1. A fresh venv (`python3 -m venv`) as the prefix: the package lands in the venv's own platlib (asked of
   the venv's interpreter), and the venv's python imports it from outside the tree, no PYTHONPATH.
2. The interpreter's own prefix (Debian: /usr/local), staged with DESTDIR: the package lands in that
   interpreter's platlib (dist-packages on Debian), where it imports from without PYTHONPATH.
3. A prefix no interpreter imports from: lib/pythonX.Y/site-packages under it, imported with PYTHONPATH.
"""
import os
import pathlib
import subprocess
import sys
import sysconfig
import tempfile

FILES = ("__init__.py", "__init__.pyi", "detect.py", "kernels.py", "plan.py", "torch.py", "torch.pyi", "transformers.py", "tune", "py.typed")
CODE = ("import attnsel, sys; assert attnsel.__file__.startswith(sys.argv[1]), attnsel.__file__; "
        "s = attnsel.select(attnsel.reference_registry(), attnsel.Query(), attnsel.Platform.cuda(9, 0)); "
        "print(attnsel.__file__, s.backend)")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "DESTDIR")}
    env.update(extra)
    return env


def install(cmake, build, prefix, **env):
    out = subprocess.run([cmake, "--install", build, "--prefix", str(prefix), "--component", "python"],
                         check=True, capture_output=True, text=True, env=clean_env(**env)).stdout
    return out


def check_package(site):
    installed = sorted(p.name for p in (site / "attnsel").iterdir())
    for name in FILES:
        assert name in installed, f"{name} not installed in {site}: {installed}"
    assert any(n.startswith("_attnsel") and n.endswith((".so", ".pyd")) for n in installed), installed
    engines = sorted(p.name for p in (site / "attnsel" / "engines").iterdir())
    assert engines == ["__init__.py", "sglang.py", "vllm.py"], engines
    tune = sorted(p.name for p in (site / "attnsel" / "tune").iterdir() if p.suffix == ".py")
    assert tune == ["__init__.py", "__main__.py", "cli.py", "kernel_runner.py", "measure.py", "overlay.py", "records.py",
                    "torch_runner.py",
                    "workload.py"], tune


def import_from(python, site, cwd, **env):
    out = subprocess.run([str(python), "-c", CODE, str(site)], check=True, env=clean_env(**env), cwd=cwd,
                         capture_output=True, text=True).stdout.strip()
    assert out.endswith(" FLASH_ATTN"), out
    print(out)


def main() -> int:
    cmake, build = sys.argv[1:3]
    version = "python%d.%d" % sys.version_info[:2]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        # 1. a fresh venv (no pip: faster, and nothing is installed with it)
        venv = tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        vpy = venv / "bin" / "python3"
        platlib = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        install(cmake, build, venv)
        check_package(pathlib.Path(platlib))
        assert pathlib.Path(platlib) == venv / "lib" / version / "site-packages", platlib
        assert not (venv / "lib" / version / "dist-packages").exists(), "installed into dist-packages too"
        import_from(vpy, platlib, cwd=tmp)

        # 2. the build interpreter's own prefix, staged under DESTDIR (nothing is written outside tmp)
        own = pathlib.Path(sysconfig.get_path("platlib"))  # <prefix>/lib/pythonX.Y/{site,dist}-packages
        prefix = own.parents[2]  # Debian: /usr/local, where pip and `make install` put packages
        stage = tmp / "stage"
        install(cmake, build, prefix, DESTDIR=str(stage))
        staged = stage / own.relative_to(own.anchor)
        check_package(staged)
        print("staged", prefix, "->", staged)

        # 3. a prefix no interpreter imports from
        plain = tmp / "plain"
        install(cmake, build, plain)
        site = plain / "lib" / version / "site-packages"
        check_package(site)
        import_from(sys.executable, site, cwd=tmp, PYTHONPATH=str(site))
    return 0


if __name__ == "__main__":
    sys.exit(main())
