# SPDX-License-Identifier: Apache-2.0
# Builds the attnsel._attnsel extension by driving the project's own CMake build (catalogs are generated there).
"""`pip install --no-build-isolation .` (metadata in pyproject.toml).

CMake configures a module-only build (no tests, no CLI) for the interpreter running pip, builds the
`attnsel_python` target and copies the extension into the wheel. Extra CMake arguments can be passed
in the CMAKE_ARGS environment variable; the build folder is build/pip-<python version>.
"""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = ROOT / "build" / f"pip-{sys.version_info.major}.{sys.version_info.minor}"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            *pybind11_hint(),
            "-DATTNSEL_BUILD_PYTHON=ON",
            "-DATTNSEL_BUILD_TESTS=OFF",
            "-DATTNSEL_BUILD_TOOLS=OFF",
            "-DATTNSEL_TEST_CONSUMERS=OFF",
            "-DATTNSEL_INSTALL=OFF",
            *shlex.split(os.environ.get("CMAKE_ARGS", "")),
        ]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", ext.target, "-j", jobs], check=True)
        suffix = sysconfig_ext_suffix()
        built = build_dir / "python" / "attnsel" / f"_attnsel{suffix}"
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)


def pybind11_hint() -> list:
    """pybind11's CMake package from the build environment (PyPI's pybind11 under build isolation), so the
    extension is built against the headers pip installed; without it CMake finds the machine's own."""
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


def sysconfig_ext_suffix() -> str:
    import sysconfig

    return sysconfig.get_config_var("EXT_SUFFIX")


setup(ext_modules=[CMakeExtension("attnsel._attnsel", "attnsel_python")], cmdclass={"build_ext": CMakeBuild})
