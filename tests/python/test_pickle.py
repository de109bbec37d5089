# SPDX-License-Identifier: Apache-2.0
# Pickling: Platform, Query, OverrideSet and registries survive a round trip (registries via catalog JSON).
import copy
import pickle

import pytest

import attnsel

VALUES = [
    attnsel.Platform.cuda(9, 0, components=["cudnn=9.19.0", "cudnn_preferred"]),
    attnsel.Platform.rocm("gfx90a", components={"aiter": "0.1.4"}),
    attnsel.Platform.cpu(),
    attnsel.Platform.cuda(9, 0, components=["torch=2.11.0"]).with_device_name("NVIDIA H200"),
    attnsel.Query(),
    attnsel.Query(head_size=64, head_size_v=512, dtype="float16", kv_cache_dtype="fp8_e4m3", block_size=64,
                  attn_type="encoder_decoder", mode="mla", domain="encoder", num_heads=16, features={"sinks", "dcp"}),
    attnsel.OverrideSet(decoder="FLASH_ATTN,auto", encoder="-TORCH_SDPA", source="env"),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_values_round_trip(value, protocol):
    back = pickle.loads(pickle.dumps(value, protocol=protocol))
    assert type(back) is type(value) and back == value and repr(back) == repr(value)
    assert copy.deepcopy(value) == value


@pytest.mark.parametrize("make", [attnsel.reference_registry, attnsel.torch_sdpa_registry])
def test_registries_round_trip_and_select_the_same(make):
    reg = make()
    back = pickle.loads(pickle.dumps(reg))
    assert back == reg and back.name == reg.name and back.backends == reg.backends
    p = attnsel.Platform.cuda(9, 0)
    assert attnsel.select(back, attnsel.Query(), p) == attnsel.select(reg, attnsel.Query(), p)


def test_a_merged_registry_pickles_with_its_layers(tmp_path):
    reg = attnsel.reference_registry()
    reg.merge(attnsel.torch_sdpa_registry())
    back = pickle.loads(pickle.dumps(reg))
    assert back == reg and "MATH" in back


def test_pickled_objects_name_the_public_module():
    assert b"attnsel._attnsel" not in pickle.dumps(attnsel.Query())
    assert attnsel.Query.__module__ == "attnsel"
