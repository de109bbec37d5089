# SPDX-License-Identifier: Apache-2.0
# The attnsel package: attention-backend selection over the C++ core, same semantics (docs/python.md).
"""Pick the attention backend an inference engine runs, with the reasons.

    import attnsel
    reg = attnsel.reference_registry()
    q = attnsel.Query(head_size=128, dtype="bfloat16")
    s = attnsel.select(reg, q, attnsel.Platform.cuda(9, 0))
    s.backend  # 'FLASH_ATTN'

attnsel.detect_platform() detects the machine (GPU, cuDNN, packages, engine switches) with a source
for every fact. attnsel.torch (only where torch is installed) maps SDPA calls onto the torch_sdpa catalog.
"""

import re as _re
from typing import Tuple as _Tuple


def _in_subinterpreter() -> bool:
    """True in a subinterpreter (CPython's _interpreters / _xxsubinterpreters say; False without them)."""
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            module = __import__(name)
            return module.get_current() != module.get_main()
        except Exception:  # noqa: BLE001 - absent or different: assume the main interpreter
            continue
    return False


# The compiled core (pybind11) supports only the main interpreter: in a subinterpreter its first call
# would wait forever for the GIL. Refuse here, before any of it runs (also when the main interpreter has
# imported it already, which lets a subinterpreter reuse the module without running its init again).
if _in_subinterpreter():
    raise ImportError("attnsel cannot be imported in a subinterpreter: its pybind11 core supports only the main "
                      "interpreter")

from ._attnsel import (  # noqa: E402
    ATTN_TYPES,
    BUILTIN_CATALOGS,
    DOMAINS,
    DTYPES,
    ERROR_CODES,
    FEATURES,
    KV_CACHE_DTYPES,
    MODES,
    OVERRIDE_SOURCES,
    REASON_CODES,
    VENDORS,
    VERDICTS,
    Candidate,
    CatalogError,
    Explanation,
    ModelConfig,
    OverrideSet,
    Platform,
    Query,
    Reason,
    Registry,
    Selection,
    SelectionError,
    Selector,
    __version__,
    builtin_catalog,
    explain,
    load_catalog,
    parse_catalog,
    read_model_config,
    reference_registry,
    select,
    to_json,
    torch_sdpa_registry,
)
from .detect import Detection, DetectedFact, detect_platform
from .plan import LayerGroup, ModelPlan, plan_model


def _keywords_of(function) -> _Tuple[str, ...]:
    """The parameter names of a bound function, read from the signature pybind11 writes on the first line
    of its docstring (`f(self: T, *, a: handle = '', b: handle = None) -> None`): the binding's own list."""
    signature = (function.__doc__ or "").splitlines()[0]
    names = tuple(n for n in _re.findall(r"(?:\(|, )(\w+): ", signature.split(" -> ")[0]) if n != "self")
    if not names:
        raise RuntimeError(f"attnsel: no parameters in the signature {signature!r}")  # a pybind11 format change
    return names


def _name_unknown_keywords(owner, attr, label, static=False):
    """Wraps owner.attr so that a mistyped keyword is a TypeError naming it with the closest name (pybind11's
    own message lists every overload instead). Query does this in C++ from its field table."""
    import difflib
    import functools

    original = getattr(owner, attr)
    names = _keywords_of(original)

    @functools.wraps(original)
    def checked(*args, **kwargs):
        for key in kwargs:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else f"; expected one of {', '.join(names)}"
                raise TypeError(f"{label}() got an unexpected keyword argument '{key}'{hint}")
        return original(*args, **kwargs)

    setattr(owner, attr, staticmethod(checked) if static else checked)


for _owner in (OverrideSet, Reason, Candidate, Platform, Selector):
    # Selector.select is left as it is: a wrapper would cost every cached call a Python frame.
    _name_unknown_keywords(_owner, "__init__", _owner.__name__)
for _factory in ("cuda", "rocm", "cpu", "xpu"):
    _name_unknown_keywords(Platform, _factory, f"Platform.{_factory}", static=True)
del _owner, _factory

__all__ = [
    "ATTN_TYPES",
    "BUILTIN_CATALOGS",
    "DOMAINS",
    "DTYPES",
    "ERROR_CODES",
    "FEATURES",
    "KV_CACHE_DTYPES",
    "MODES",
    "OVERRIDE_SOURCES",
    "REASON_CODES",
    "VENDORS",
    "VERDICTS",
    "Candidate",
    "CatalogError",
    "DetectedFact",
    "Detection",
    "Explanation",
    "LayerGroup",
    "ModelConfig",
    "ModelPlan",
    "OverrideSet",
    "Platform",
    "Query",
    "Reason",
    "Registry",
    "Selection",
    "SelectionError",
    "Selector",
    "builtin_catalog",
    "detect_platform",
    "explain",
    "load_catalog",
    "parse_catalog",
    "plan_model",
    "read_model_config",
    "reference_registry",
    "select",
    "to_json",
    "torch_sdpa_registry",
]

# The compiled core names its classes and functions after this package (attnsel.Query, not
# attnsel._attnsel.Query): help(), reprs, errors and pickles show only public names.
