# SPDX-License-Identifier: Apache-2.0
# Values that outlive what made them: a Selection unpickles only to a state select could return, and a
# Registry's generation (select_sdpa's cache key) changes on every merge and is never shared by two
# different registries.
import gc
import pickle

import pytest

import attnsel

HOPPER = attnsel.Platform.cuda(9, 0)


def state_of(sel):
    return list(sel.__getstate__())


def rebuilt(state):
    obj = attnsel.Selection.__new__(attnsel.Selection)
    obj.__setstate__(tuple(state))
    return obj


def test_every_state_select_returns_round_trips():
    reg = attnsel.reference_registry()
    auto = attnsel.select(reg, attnsel.Query(), HOPPER)
    forced = attnsel.select(reg, attnsel.Query(), HOPPER, "TRITON_ATTN")
    fell = attnsel.select(reg, attnsel.Query(head_size=72), HOPPER, "FLASHMLA", prefer=True)
    assert fell.fell_back and fell.fallback and not fell.overridden
    for sel in (auto, forced, fell):
        assert pickle.loads(pickle.dumps(sel)) == sel


@pytest.mark.parametrize("change, message", [
    (lambda s: s.__setitem__(3, True) or s.__setitem__(4, "none"), "overridden, but the override's source is none"),
    (lambda s: s.__setitem__(1, -1), "names no variant"),
    (lambda s: s.__setitem__(5, True), "fell_back needs"),
])
def test_states_select_never_returns_are_refused(change, message):
    sel = attnsel.select(attnsel.reference_registry(), attnsel.Query(), HOPPER)  # FLASH_ATTN: it has variants
    assert sel.backend == "FLASH_ATTN" and sel.variant
    state = state_of(sel)
    change(state)
    with pytest.raises(ValueError, match=message):
        rebuilt(state)


def test_fallback_candidates_without_the_flag_are_refused():
    fell = attnsel.select(attnsel.reference_registry(), attnsel.Query(head_size=72), HOPPER, "FLASHMLA", prefer=True)
    state = state_of(fell)
    state[5] = False
    with pytest.raises(ValueError, match="fallback candidates without fell_back"):
        rebuilt(state)
    state = state_of(fell)
    state[3] = True  # forced and fell back at once
    with pytest.raises(ValueError, match="fell_back needs"):
        rebuilt(state)


def test_a_registry_generation_changes_on_merge_and_is_never_reused(tmp_path):
    reg = attnsel.torch_sdpa_registry()
    before = reg.generation
    copy = reg.copy()
    assert copy.generation == before  # the same registry: the same answers
    overlay = tmp_path / "o.json"
    overlay.write_text('{"format": "attnsel-catalog", "version": 1, "name": "o", "backends": [], "policies": '
                       '[{"domain": "decoder", "vendor": "cuda", "order": ["MATH"]}]}')
    reg.merge(str(overlay))
    merged = reg.generation
    assert merged != before and copy.generation == before
    seen = {reg.generation, before}
    for _ in range(50):  # registries made and collected: their ids are reused, their generations never
        r = attnsel.parse_catalog(
            '{"format": "attnsel-catalog", "version": 1, "name": "x", "backends": [{"name": "A", "domains": '
            '["decoder"]}], "policies": []}')
        assert r.generation not in seen
        seen.add(r.generation)
        del r
        gc.collect()
    with pytest.raises(attnsel.CatalogError):
        reg.merge(str(tmp_path / "missing.json"))
    assert reg.generation == merged  # a failed merge changes nothing
