# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the differential oracle (docs/oracle.md): the grid reader, the sampler, the
error type that the tools turn into exit code 2, and the stand-in module finder."""
import importlib.abc
import importlib.machinery
import itertools
import json
import os
import random
import sys
import types
from typing import Any, Dict, Iterable, List

SAMPLE_SEED = 20261204


class OracleError(Exception):
    """Bad input to the oracle itself (a grid, a version, a catalog): exit 2 with this message."""


def load_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise OracleError(f"{what} {path}: no such file") from None
    except json.JSONDecodeError as e:
        raise OracleError(f"{what} {path}: not JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
    except OSError as e:
        raise OracleError(f"{what} {path}: {e.strerror}") from None


def need(obj: Dict[str, Any], key: str, kind: type, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise OracleError(f"{where}: missing key '{key}'")
    value = obj[key]
    if kind is float and isinstance(value, int):
        return value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise OracleError(f"{where}/{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def product(axes: Dict[str, List[Any]], where: str) -> Iterable[Dict[str, Any]]:
    """Every combination of the axes, in the grid file's key order (deterministic)."""
    if not isinstance(axes, dict):
        raise OracleError(f"{where}: expected an object of axes")
    keys = list(axes)
    for k in keys:
        if not isinstance(axes[k], list) or not axes[k]:
            raise OracleError(f"{where}/{k}: expected a non-empty list")
    for values in itertools.product(*(axes[k] for k in keys)):
        yield dict(zip(keys, values))


def sample(cases: List[Dict[str, Any]], n: int) -> List[Dict[str, Any]]:
    """A fixed-seed subset of n cases, in grid order."""
    if n is None or n >= len(cases):
        return cases
    keep = set(random.Random(SAMPLE_SEED).sample(range(len(cases)), n))
    return [c for i, c in enumerate(cases) if i in keep]


class _Anything(types.ModuleType):
    """A stand-in module: every attribute is a MagicMock, every submodule another stand-in."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        from unittest.mock import MagicMock

        value = MagicMock(name=f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `roots` (and every submodule) as stand-in modules, so that find_spec() finds them
    and `from root.x import y` succeeds: the engine sees the package as installed."""

    def __init__(self, roots: Iterable[str]):
        self.roots = set(roots)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _Anything(spec.name)
        m.__path__ = []
        m.__version__ = "0.0.0+oracle-stand-in"
        return m

    def exec_module(self, module):
        pass


def install_stand_ins(roots: Iterable[str]) -> None:
    roots = list(roots)
    if roots:
        sys.meta_path.insert(0, StandInFinder(roots))


def hide_modules(roots: Iterable[str]) -> None:
    """Makes `roots` absent: import raises ModuleNotFoundError and find_spec() returns None."""
    for r in roots:
        sys.modules[r] = None  # type: ignore[assignment]


def describe_exception(e: BaseException) -> Dict[str, str]:
    msg = str(e)
    if len(msg) > 600:
        msg = msg[:600] + "..."
    return {"error": type(e).__name__, "message": msg}


def by_world(cases: List[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """The cases grouped by the name of their world (each world runs in a process of its own), in order."""
    out: Dict[str, List[Dict[str, Any]]] = {}
    for c in cases:
        out.setdefault(c["world"]["name"], []).append(c)
    return out


def write_answers(path: str, engine: str, version: str, grid: str, answers: List[Dict[str, Any]]) -> None:
    """The engine's answers as the file compare.py reads, its folder made when missing."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"engine": engine, "version": version, "grid": grid, "cases": answers}, f)
