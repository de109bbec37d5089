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

from ._attnsel import (
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
    "ModelConfig",
    "OverrideSet",
    "Platform",
    "Query",
    "Reason",
    "Registry",
    "Selection",
    "SelectionError",
    "builtin_catalog",
    "detect_platform",
    "explain",
    "load_catalog",
    "parse_catalog",
    "read_model_config",
    "reference_registry",
    "select",
    "to_json",
    "torch_sdpa_registry",
]

# Objects report the public package as their home (repr, pickle, help()).
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        try:
            _obj.__module__ = __name__
        except (AttributeError, TypeError):
            pass
del _name, _obj
